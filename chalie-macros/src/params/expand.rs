//! Code generation for validated Params structs and ParamEnum enums.

use super::parse::{DefaultLit, Field, FieldDefault, ParamEnum, ParamsStruct};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

fn option_tokens(value: Option<f64>) -> TokenStream {
    match value {
        Some(number) => quote!(__chalie::Some(#number)),
        None => quote!(__chalie::None),
    }
}

/// `Params` and `ParamType` for a struct: its fields described once as
/// data (a `static` of `FieldSpec`s) that chalie-core's shared functions
/// read to build the schema and to parse, so each struct adds little code
/// of its own to compile: its parse names the list of its field types and
/// one generic reader, generic over those types alone, reads them.
///
/// Each field's type is used with the user's own tokens, through
/// `<Type as ParamType>` in the table, so a type without a schema is an
/// error at the field's type, and no trait impl is added per field.
pub(crate) fn params_impl(params: &ParamsStruct) -> TokenStream {
    let krate = &params.krate;
    // Inside the generated block, `__chalie` names the crate's private
    // module (imported once at the block's top): a shorter expansion is
    // less for the compiler to take in, per struct.
    let private = quote!(__chalie);
    let ident = &params.ident;
    let (impl_generics, type_generics, where_clause) = params.generics.split_for_impl();
    let field_names: Vec<&String> = params.fields.iter().map(|field| &field.name).collect();

    let mut table_checks = Vec::new();
    let mut specs = Vec::new();
    let mut field_actions = Vec::new();
    for field in &params.fields {
        let name = &field.name;
        let ty = &field.ty;
        let description = &field.description;
        // The type is reached through `<Type as ParamType>` once per field
        // (and `<Type as Bounded>` for a bounded field), with the user's
        // own tokens: a type without a schema is one error at the field's
        // type.
        let rule = quote!(<#ty as #private::ParamType>::DEFAULT_RULE);
        let default = match &field.default {
            Some(default) => {
                table_checks.push(default_check(default, field, &rule, &private));
                let literal = default_literal(&default.literal, &private);
                quote!(__chalie::Some(#literal))
            }
            None => quote!(__chalie::None),
        };
        if field.bound_span.is_some() {
            table_checks.push(quote!(let () = <#ty as #private::Bounded>::NUMBER;));
        }
        if let Some(span) = field.clamp {
            table_checks.push(clamp_check(field, span, &rule, &private));
        }
        let bounds = if field.min.is_none() && field.max.is_none() && field.clamp.is_none() {
            quote!(#private::Bounds::NONE)
        } else {
            let min = option_tokens(field.min);
            let max = option_tokens(field.max);
            let clamp = field.clamp.is_some();
            quote!(#private::Bounds { min: #min, max: #max, clamp: #clamp })
        };
        let actions: Vec<&String> = field
            .actions
            .iter()
            .flat_map(|actions| &actions.names)
            .collect();
        if !actions.is_empty() {
            field_actions.push(quote!((#name, &[#(#actions),*])));
        }
        specs.push(quote! {
            #private::FieldSpec {
                name: #name,
                description: #description,
                kind: <#ty as #private::ParamType>::FIELD.kind,
                default: #default,
                bounds: #bounds,
                actions: &[#(#actions),*],
            }
        });
    }
    // Left to the trait's empty default when no field has actions: one
    // constant fewer to check per struct.
    let field_actions = (!field_actions.is_empty()).then(|| {
        quote!(const FIELD_ACTIONS: &'static [(&'static str, &'static [&'static str])] = &[#(#field_actions),*];)
    });
    let count = specs.len();
    // The fields as the list `(A, (B, ()))` of their types' `FIELD` that
    // one generic reader in chalie-core reads, and the same nesting of the
    // fields' names as the pattern that takes the values out. Each type is
    // named as in the table, so a type without a schema is the same error
    // in both, reported once.
    let (list, list_pattern) =
        params
            .fields
            .iter()
            .rev()
            .fold((quote!(()), quote!(())), |(list, pattern), field| {
                let ty = &field.ty;
                let local = &field.ident;
                (
                    quote!((<#ty as #private::ParamType>::FIELD, #list)),
                    quote!((#local, #pattern)),
                )
            });
    let locals = params.fields.iter().map(|field| &field.ident);

    quote! {
        const _: () = {
            use #krate::__private as __chalie;

            // The checks run as the table is evaluated, at compile time: a
            // failing one is an error at its own tokens, and no constant is
            // added per check.
            static __CHALIE_FIELDS: [#private::FieldSpec; #count] = {
                #(#table_checks)*
                [#(#specs),*]
            };

            impl #impl_generics #private::Params for #ident #type_generics #where_clause {
                const FIELDS: &'static [&'static str] = &[#(#field_names),*];
                #field_actions
                const FIELD_TABLE: &'static [#private::FieldSpec] = &__CHALIE_FIELDS;

                fn schema() -> &'static #private::Value {
                    #private::params_schema(&__CHALIE_FIELDS)
                }

                #[doc(hidden)]
                const __CHALIE_MACRO_ONLY: #private::MacroOnly = #private::MACRO_ONLY;
            }

            impl #impl_generics #private::ParamType for #ident #type_generics #where_clause {
                const DEFAULT_RULE: #private::DefaultRule = #private::DefaultRule::NoLiteral("an object");

                fn schema() -> #private::Value {
                    <Self as #private::Params>::schema().clone()
                }

                // `match` rather than `?` or a closure: less for the
                // compiler to check per struct.
                fn parse(value: &#private::Value, path: &str) -> __chalie::Result<Self, #private::ParamErrors> {
                    match #private::parse_object(value, path, &__CHALIE_FIELDS, &#list) {
                        __chalie::Ok(#list_pattern) => __chalie::Ok(Self { #(#locals),* }),
                        __chalie::Err(errors) => __chalie::Err(errors),
                    }
                }
            }
        };
    }
}

/// The literal of `#[param(default = …)]`, as data.
fn default_literal(literal: &DefaultLit, private: &TokenStream) -> TokenStream {
    match literal {
        DefaultLit::Str(text) => quote!(#private::DefaultLiteral::Str(#text)),
        DefaultLit::Int(number) => {
            let number = proc_macro2::Literal::i128_unsuffixed(*number);
            quote!(#private::DefaultLiteral::Int(#number))
        }
        DefaultLit::Float(number) => quote!(#private::DefaultLiteral::Float(#number)),
        DefaultLit::Bool(flag) => quote!(#private::DefaultLiteral::Bool(#flag)),
    }
}

/// A statement of the field table's initializer that fails to evaluate,
/// at the default's literal, when the field's type would not parse the
/// default.
fn default_check(
    default: &FieldDefault,
    field: &Field,
    rule: &TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let literal = default_literal(&default.literal, private);
    let name = &field.name;
    let ty = type_text(&field.ty);
    let written = &default.written;
    quote_spanned! {default.span=>
        __chalie::fail_on(#private::default_problem(
            #rule,
            #literal,
            #private::DefaultSite { field: #name, ty: #ty, written: #written },
        ));
    }
}

/// A statement of the field table's initializer that fails to evaluate,
/// at the `clamp` key, when a bound is not a value of the field's type (`max = 300` on a `u8`): the clamped
/// value would then fail to parse.
fn clamp_check(
    field: &Field,
    span: proc_macro2::Span,
    rule: &TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let bound = |value: Option<f64>| match value {
        Some(value) => {
            let text = value.to_string();
            quote!(__chalie::Some(#private::ClampBound { value: #value, text: #text }))
        }
        None => quote!(__chalie::None),
    };
    let (min, max) = (bound(field.min), bound(field.max));
    let name = &field.name;
    let ty = type_text(&field.ty);
    quote_spanned! {span=>
        __chalie::fail_on(#private::clamp_problem(
            #rule,
            [#min, #max],
            #private::ClampSite { field: #name, ty: #ty },
        ));
    }
}

/// The type as a user wrote it, without the spaces token printing adds.
fn type_text(ty: &syn::Type) -> String {
    let mut text = String::new();
    for piece in quote!(#ty).to_string().split(' ') {
        let joins = text.chars().last().is_none_or(|last| {
            !last.is_alphanumeric() || !piece.starts_with(char::is_alphanumeric)
        });
        if !joins {
            text.push(' ');
        }
        text.push_str(piece);
    }
    text
}

/// A stub used only beside compile errors, so uses of the type compile.
pub(crate) fn params_fallback(input: &syn::DeriveInput, krate: &syn::Path) -> TokenStream {
    let private = quote!(#krate::__private);
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #private::Params for #ident #type_generics #where_clause {
            const FIELDS: &'static [&'static str] = &[];
            fn schema() -> &'static #private::Value { #private::fallback_schema() }
            #[doc(hidden)]
            const __CHALIE_MACRO_ONLY: #private::MacroOnly = #private::MACRO_ONLY;
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
                const DEFAULT_RULE: #private::DefaultRule = #private::DefaultRule::OneOf(<Self as #krate::ParamEnum>::VALUES);

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
pub(crate) fn enum_fallback(input: &syn::DeriveInput, krate: &syn::Path) -> TokenStream {
    let private = quote!(#krate::__private);
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
