//! Code generation for validated Params structs and ParamEnum enums.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{ParamEnum, ParamsStruct};

fn option_tokens(value: Option<f64>) -> TokenStream {
    match value {
        Some(number) => quote!(::core::option::Option::Some(#number)),
        None => quote!(::core::option::Option::None),
    }
}

/// `Params` and `ParamType` for a struct: a schema built once from the
/// field types, and a parser that reports every bad field at once.
pub(crate) fn params_impl(params: &ParamsStruct) -> TokenStream {
    let krate = &params.krate;
    let private = quote!(#krate::__private);
    let ident = &params.ident;
    let (impl_generics, type_generics, where_clause) = params.generics.split_for_impl();
    let field_names: Vec<&String> = params.fields.iter().map(|field| &field.name).collect();

    let mut schema_fields = Vec::new();
    let mut reads = Vec::new();
    let mut asserts = Vec::new();
    for field in &params.fields {
        let name = &field.name;
        let ty = &field.ty;
        let local = &field.ident;
        let description = &field.description;
        let default = match &field.default {
            Some(literal) => {
                quote!(::core::option::Option::Some(#private::serde_json::json!(#literal)))
            }
            None => quote!(::core::option::Option::None),
        };
        let min = option_tokens(field.min);
        let max = option_tokens(field.max);
        asserts.push(quote_spanned! {ty.span()=>
            let _ = #private::assert_param_type::<#ty>;
        });
        let bounded = field.bound_span.map(|span| {
            quote_spanned! {span=>
                let _ = #private::assert_bounded::<#ty>;
            }
        });
        asserts.extend(bounded);
        let checker = if field.bound_span.is_some() {
            quote!(::core::option::Option::Some(#private::check_bounds::<#ty>))
        } else {
            quote!(::core::option::Option::None)
        };
        schema_fields.push(quote! {
            schema.field(#private::FieldSpec {
                name: #name,
                description: #description,
                schema: <#ty as #private::ParamType>::schema(),
                optional: <#ty as #private::ParamType>::OPTIONAL,
                default: #default,
                min: #min,
                max: #max,
            });
        });
        reads.push(quote! {
            let #local = reader.field::<#ty>(#name, #default, #min, #max, #checker);
        });
    }
    let locals: Vec<&syn::Ident> = params.fields.iter().map(|field| &field.ident).collect();

    quote! {
        const _: () = {
            fn __chalie_assert_field_types #impl_generics () #where_clause {
                #(#asserts)*
            }

            impl #impl_generics #private::Params for #ident #type_generics #where_clause {
                const FIELDS: &'static [&'static str] = &[#(#field_names),*];

                fn schema() -> &'static #private::Value {
                    static SCHEMA: #private::OnceLock<#private::Value> = #private::OnceLock::new();
                    SCHEMA.get_or_init(|| {
                        let mut schema = #private::ObjectSchema::new();
                        #(#schema_fields)*
                        schema.finish()
                    })
                }

                fn from_arguments(arguments: &#private::Value) -> ::core::result::Result<Self, #private::ParamErrors> {
                    <Self as #private::ParamType>::parse(arguments, "")
                }

                #[doc(hidden)]
                fn __chalie_macro_only(_: #private::MacroOnly) {}
            }

            impl #impl_generics #private::ParamType for #ident #type_generics #where_clause {
                fn schema() -> #private::Value {
                    <Self as #private::Params>::schema().clone()
                }

                fn parse(value: &#private::Value, path: &str) -> ::core::result::Result<Self, #private::ParamErrors> {
                    let mut reader = #private::ObjectReader::new(value, path, <Self as #private::Params>::FIELDS)?;
                    #(#reads)*
                    reader.finish()?;
                    match (#(#locals,)*) {
                        (#(::core::option::Option::Some(#locals),)*) => ::core::result::Result::Ok(Self { #(#locals),* }),
                        _ => ::core::result::Result::Err(reader.into_errors()),
                    }
                }
            }
        };
    }
}

/// A stub used only beside compile errors, so uses of the type compile.
pub(crate) fn params_fallback(input: &syn::DeriveInput) -> TokenStream {
    let krate: syn::Path = syn::parse_quote!(::chalie_core);
    let private = quote!(#krate::__private);
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #private::Params for #ident #type_generics #where_clause {
            const FIELDS: &'static [&'static str] = &[];
            fn schema() -> &'static #private::Value { #private::fallback_schema() }
            fn from_arguments(_: &#private::Value) -> ::core::result::Result<Self, #private::ParamErrors> {
                ::core::result::Result::Err(#private::ParamErrors::invalid_definition())
            }
            #[doc(hidden)]
            fn __chalie_macro_only(_: #private::MacroOnly) {}
        }
        impl #impl_generics #private::ParamType for #ident #type_generics #where_clause {
            fn schema() -> #private::Value { #private::fallback_schema().clone() }
            fn parse(_: &#private::Value, _: &str) -> ::core::result::Result<Self, #private::ParamErrors> {
                ::core::result::Result::Err(#private::ParamErrors::invalid_definition())
            }
        }
    }
}

/// `ParamType` and `ParamEnum` for an enum of unit variants.
pub(crate) fn enum_impl(param_enum: &ParamEnum) -> TokenStream {
    let krate = &param_enum.krate;
    let private = quote!(#krate::__private);
    let ident = &param_enum.ident;
    let variant_idents: Vec<&syn::Ident> = param_enum
        .variants
        .iter()
        .map(|(variant, _)| variant)
        .collect();
    let values: Vec<&String> = param_enum.variants.iter().map(|(_, value)| value).collect();
    quote! {
        const _: () = {
            impl #krate::ParamEnum for #ident {
                const VALUES: &'static [&'static str] = &[#(#values),*];

                fn as_str(&self) -> &'static str {
                    match self {
                        #(Self::#variant_idents => #values,)*
                    }
                }
            }

            impl #private::ParamType for #ident {
                fn schema() -> #private::Value {
                    #private::enum_schema(<Self as #krate::ParamEnum>::VALUES)
                }

                fn parse(value: &#private::Value, path: &str) -> ::core::result::Result<Self, #private::ParamErrors> {
                    match #private::parse_enum_value(value, path, <Self as #krate::ParamEnum>::VALUES)? {
                        #(#values => ::core::result::Result::Ok(Self::#variant_idents),)*
                        _ => ::core::result::Result::Err(#private::ParamErrors::invalid_definition()),
                    }
                }
            }
        };
    }
}

/// A stub used only beside compile errors.
pub(crate) fn enum_fallback(input: &syn::DeriveInput) -> TokenStream {
    let private = quote!(::chalie_core::__private);
    let ident = &input.ident;
    quote! {
        impl #private::ParamType for #ident {
            fn schema() -> #private::Value { #private::fallback_schema().clone() }
            fn parse(_: &#private::Value, _: &str) -> ::core::result::Result<Self, #private::ParamErrors> {
                ::core::result::Result::Err(#private::ParamErrors::invalid_definition())
            }
        }
    }
}
