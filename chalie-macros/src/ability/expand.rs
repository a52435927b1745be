//! Code generation for a validated ability. Nothing here can fail.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{ExampleKind, ExampleObject, Input};
use super::validate::Ability;

/// The function, untouched, plus a type of the same name in the type
/// namespace implementing `Ability`, plus its registry entry.
pub(crate) fn expand(ability: &Ability, function: &syn::ItemFn, item: &TokenStream) -> TokenStream {
    let krate = &ability.krate;
    // Inside the generated block, `__chalie` names the crate's private
    // module (imported once at the block's top): a shorter expansion is
    // less for the compiler to take in, per ability.
    let private = quote!(__chalie);
    let fn_ident = &function.sig.ident;
    let vis = &function.vis;
    let type_ident = format_ident!("{}", fn_ident, span = fn_ident.span());

    let params_type = match ability.params_type() {
        Some(ty) => quote!(#ty),
        None => quote!(#private::NoParams),
    };

    let call_args = ability.signature.inputs.iter().map(|input| match input {
        Input::Params(_) => quote!(params),
        Input::Turn => quote!(&turn),
    });
    let ignore_params = ability
        .params_type()
        .is_none()
        .then(|| quote!(let _ = params;));
    // The turn is bound to the call only for a function that takes it.
    let takes_turn = ability
        .signature
        .inputs
        .iter()
        .any(|input| matches!(input, Input::Turn));
    let bind_turn = match takes_turn {
        true => quote!(let turn = turn.bind();),
        false => quote!(let _ = turn;),
    };
    let call = if ability.signature.is_async {
        quote!(#fn_ident(#(#call_args),*).await)
    } else {
        quote!(#fn_ident(#(#call_args),*))
    };
    // An `async fn` of its parameters alone is boxed as it is: its future
    // already runs nothing until polled and borrows nothing of `call`'s,
    // and wrapping it in an `async move` block would be one more future
    // type to compile per ability. A sync function, or one that borrows
    // the turn, is wrapped so it runs only when polled and owns the turn.
    // A function that does not take the turn never has it bound.
    let only_params = matches!(ability.signature.inputs.as_slice(), [Input::Params(_)]);
    // Boxed as a `dyn Future` and pinned by chalie-core's one function,
    // so `Box::pin` is not compiled once per future type.
    let body = if ability.signature.is_async && only_params {
        quote! {
            #bind_turn
            #private::pin_future(::std::boxed::Box::new(#fn_ident(params)))
        }
    } else {
        quote! {
            #bind_turn
            #private::pin_future(::std::boxed::Box::new(async move {
                #ignore_params
                #call
            }))
        }
    };

    let name = &ability.name;
    let summary = &ability.summary;
    let examples = &ability.examples;
    let tooltip = &ability.tooltip;
    let discoverable = ability.discoverable;
    let internal = ability.internal;
    let effect = if ability.read_only {
        quote!(#private::Effect::Read)
    } else {
        quote!(#private::Effect::Write)
    };
    let version = &ability.version;
    let toolset = &ability.toolset;
    let action_specs = ability.actions.iter().map(|action| {
        let action_name = &action.name;
        let required = action.required.iter().map(|(field, _)| field);
        quote!(#private::ActionSpec::__new(#action_name, &[#(#required),*]))
    });
    let action_checks = action_field_checks(ability, &type_ident, &private);
    // Spanned on the path, so a function of the wrong shape is one error
    // there, naming what was expected.
    let permission = ability.permission.as_ref().map(|path| {
        quote_spanned! {path.span()=>
            const DERIVES_PERMISSION: bool = true;

            fn permission(params: &Self::Params) -> #private::Option<#private::String> {
                #private::derive_permission::<Self::Params, _>(#path, params)
            }
        }
    });
    // Only what was declared is added to the spec: an ability without a
    // rate limit or tags compiles no more than before.
    let rate_limit = ability.rate_limit.as_ref().map(|limit| {
        let (calls, seconds) = (limit.calls, limit.seconds);
        quote!(.__with_rate_limit(#private::RateLimit::new(#calls, ::core::time::Duration::from_secs(#seconds))))
    });
    let tags = (!ability.tags.is_empty()).then(|| {
        let tags = &ability.tags;
        quote!(.__with_tags(&[#(#tags),*]))
    });
    let input_examples = (!ability.input_examples.is_empty()).then(|| {
        let examples = ability
            .input_examples
            .iter()
            .map(|example| example_object(example, &private));
        quote!(.__with_input_examples(&[#(#private::InputExample::__new(#examples)),*]))
    });
    let example_checks = input_example_checks(ability, &type_ident, &private);
    let location = quote_spanned! {ability.name_span=>
        #private::Location::__new(::core::module_path!(), ::core::file!(), ::core::line!(), ::core::column!())
    };
    let doc = format!(
        "The ability `{name}`, generated by `#[ability]` from [`{fn_ident}()`]: it implements [`Ability`]({krate}::Ability) and is registered in [`registry()`]({krate}::registry).",
        krate = quote!(#krate).to_string().replace(' ', "")
    );

    quote! {
        #item

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #type_ident {}

        const _: () = {
            use #krate::__private as __chalie;

            impl #private::Ability for #type_ident {
                type Params = #params_type;

                const SPEC: &'static #private::AbilitySpec = &#private::AbilitySpec::__new(#private::AbilitySpecParts {
                    name: #name,
                    summary: #summary,
                    examples: &[#(#examples),*],
                    tooltip: #tooltip,
                    discoverable: #discoverable,
                    internal: #internal,
                    effect: #effect,
                    version: #version,
                    toolset: #toolset,
                    actions: &[#(#action_specs),*],
                    location: #location,
                })#rate_limit #tags #input_examples;

                #permission

                fn call(params: Self::Params, turn: #private::TurnBinding<'_>) -> #private::BoxFuture<'static, #private::ToolResult> {
                    #body
                }

                #[doc(hidden)]
                const __CHALIE_MACRO_ONLY: #private::MacroOnly = #private::MACRO_ONLY;
            }

            // Registered through the macro linkme declares beside the
            // slice, which puts the entry in the slice's link section on
            // every platform linkme supports. `#[distributed_slice]` on the
            // static would expand to the same plus a function that checks
            // the static's type against the slice's, compiled per ability;
            // here the type is the slice's by construction.
            #private::ABILITIES! {
                #![linkme_macro = #private::ABILITIES]
                static __CHALIE_ENTRY: #private::AbilityEntry = {
                    #(#action_checks)*
                    #(#example_checks)*
                    #private::AbilityEntry::of::<#type_ident>()
                };
            }
        };
    }
}

/// Compile-time checks that the Params struct has an `action` field and
/// every field an action requires: statements of the registry entry's
/// initializer, which is evaluated at compile time, so a mismatch is a
/// compile error at the listed name and no constant is added per check. They reach the Params type through
/// a helper generic over the ability, so the user's type is bounded in
/// `type Params` alone and a type that is not Params is reported once.
///
/// In reverse, the fields that belong to some actions only
/// (`#[param(actions = [...])]`, which `#[derive(Params)]` records without
/// knowing the ability) must name declared actions, a check spanned on the
/// Params type, the one token that joins the two; and a field an action
/// requires must belong to that action, checked at the listed name.
fn action_field_checks(
    ability: &Ability,
    type_ident: &syn::Ident,
    private: &TokenStream,
) -> Vec<TokenStream> {
    let Some(params_type) = ability.params_type() else {
        return Vec::new();
    };
    let fields = quote!(#private::ability_fields::<#type_ident>());
    let mut checks = vec![quote_spanned! {params_type.span()=>
        __chalie::fail_on(#private::field_actions_problem::<#type_ident>());
    }];
    if let Some(first) = ability.actions.first() {
        let message = format!(
            "ability `{}` declares actions, but its Params struct has no `action` field; add `action: String` (or a `#[derive(ParamEnum)]` enum) documented with the valid actions",
            ability.name
        );
        checks.push(quote_spanned! {first.span=>
            if !#private::has_field(#fields, "action") {
                ::core::panic!(#message)
            }
        });
    }
    for action in &ability.actions {
        for (field, span) in &action.required {
            let message = format!(
                "action `{}` requires `{field}`, but the Params struct has no field `{field}`; add the field or fix the list",
                action.name
            );
            let action_name = &action.name;
            checks.push(quote_spanned! {*span=>
                if !#private::has_field(#fields, #field) {
                    ::core::panic!(#message)
                }
                __chalie::fail_on(#private::required_field_problem::<#type_ident>(#action_name, #field));
            });
        }
    }
    checks
}

/// An example object as constant data: `&[("key", value), ...]`.
fn example_object(object: &ExampleObject, private: &TokenStream) -> TokenStream {
    let fields = object.fields.iter().map(|field| {
        let key = &field.key;
        let value = example_value(&field.value.kind, private);
        quote!((#key, #value))
    });
    quote!(&[#(#fields),*])
}

fn example_value(kind: &ExampleKind, private: &TokenStream) -> TokenStream {
    match kind {
        ExampleKind::Null => quote!(#private::ExampleValue::Null),
        ExampleKind::Bool(flag) => quote!(#private::ExampleValue::Bool(#flag)),
        ExampleKind::Int(number) => {
            let number = proc_macro2::Literal::i128_unsuffixed(*number);
            quote!(#private::ExampleValue::Int(#number))
        }
        ExampleKind::Float(number) => {
            let number = proc_macro2::Literal::f64_unsuffixed(*number);
            quote!(#private::ExampleValue::Float(#number))
        }
        ExampleKind::Str(text) => quote!(#private::ExampleValue::Str(#text)),
        ExampleKind::Array(values) => {
            let values = values
                .iter()
                .map(|value| example_value(&value.kind, private));
            quote!(#private::ExampleValue::Array(&[#(#values),*]))
        }
        ExampleKind::Object(object) => {
            let fields = example_object(object, private);
            quote!(#private::ExampleValue::Object(#fields))
        }
    }
}

/// Compile-time checks of the input examples against the Params struct,
/// statements of the registry entry's initializer like the action checks:
/// each field's key (a field of the struct, for the example's action), at
/// the key; each value (of the field's type, within its bounds, a
/// declared action), at the value; and each example whole (no required
/// field left out), at its braces. The examples are read back from the
/// ability's spec by index, so they are written once in the expansion.
fn input_example_checks(
    ability: &Ability,
    type_ident: &syn::Ident,
    private: &TokenStream,
) -> Vec<TokenStream> {
    let mut checks = Vec::new();
    for (index, example) in ability.input_examples.iter().enumerate() {
        for (position, field) in example.fields.iter().enumerate() {
            let key = &field.key;
            checks.push(quote_spanned! {field.key_span=>
                __chalie::fail_on(#private::example_key_problem::<#type_ident>(#index, #key));
            });
            let written = &field.value.written;
            checks.push(quote_spanned! {field.value.span=>
                __chalie::fail_on(#private::example_value_problem::<#type_ident>(#index, #position, #written));
            });
        }
        checks.push(quote_spanned! {example.span=>
            __chalie::fail_on(#private::example_missing_problem::<#type_ident>(#index));
        });
    }
    checks
}

/// What `#[ability]` emits beside its compile errors: the untouched
/// function and a type of the same name implementing `Ability`, so code
/// that names the ability (`declare_output!`, tests) raises no follow-on
/// errors. The type is not registered.
pub(crate) fn fallback(
    function: &syn::ItemFn,
    item: &TokenStream,
    krate: &syn::Path,
) -> TokenStream {
    let private = quote!(#krate::__private);
    let fn_ident = &function.sig.ident;
    let vis = &function.vis;
    let type_ident = format_ident!("{}", fn_ident, span = fn_ident.span());
    let name = fn_ident.to_string();
    quote! {
        #item

        #[doc = "An ability whose `#[ability]` failed to compile."]
        #[allow(non_camel_case_types)]
        #vis struct #type_ident {}

        impl #krate::Ability for #type_ident {
            type Params = #private::NoParams;

            const SPEC: &'static #private::AbilitySpec = &#private::AbilitySpec::__fallback(
                #name,
                #private::Location::__new(::core::module_path!(), ::core::file!(), ::core::line!(), ::core::column!()),
            );

            fn call(_: Self::Params, _: #private::TurnBinding<'_>) -> #private::BoxFuture<'static, #krate::ToolResult> {
                ::std::boxed::Box::pin(async { #private::fallback_result() })
            }

            #[doc(hidden)]
            const __CHALIE_MACRO_ONLY: #private::MacroOnly = #private::MACRO_ONLY;
        }
    }
}
