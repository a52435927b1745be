//! `#[derive(Params)]` and `#[derive(ParamEnum)]`.

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;

/// Entry point of `#[derive(Params)]`. On error, a stub impl is emitted
/// beside the errors so that uses of the type raise no follow-on errors.
pub(crate) fn expand_struct(input: syn::DeriveInput) -> TokenStream {
    let mut ctxt = Ctxt::default();
    let krate = parse::container_crate(&input.attrs, &mut ctxt);
    let parsed = parse::parse_struct(&input, krate.clone(), &mut ctxt);
    match (ctxt.check(), parsed) {
        (Ok(()), Some(params)) => expand::params_impl(&params),
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let fallback = expand::params_fallback(&input, &krate);
            quote! { #errors #fallback }
        }
    }
}

/// Entry point of `#[derive(ParamEnum)]`.
pub(crate) fn expand_enum(input: syn::DeriveInput) -> TokenStream {
    let mut ctxt = Ctxt::default();
    let krate = parse::container_crate(&input.attrs, &mut ctxt);
    let parsed = parse::parse_enum(&input, krate.clone(), &mut ctxt);
    match (ctxt.check(), parsed) {
        (Ok(()), Some(param_enum)) => expand::enum_impl(&param_enum),
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let fallback = expand::enum_fallback(&input, &krate);
            quote! { #errors #fallback }
        }
    }
}

#[cfg(test)]
mod tests {
    /// A struct that contains itself cannot be inlined: its field type is
    /// refused, and the stub is emitted in place of the impls.
    #[test]
    fn a_struct_containing_itself_is_refused_at_the_field_type() {
        let input: syn::DeriveInput = syn::parse_quote! {
            struct Tree {
                /// The subtrees.
                children: Vec<Self>,
            }
        };
        let output = super::expand_struct(input).to_string();
        assert!(output.contains("compile_error"), "{output}");
        assert!(output.contains("`Tree` contains itself"), "{output}");
        assert!(!output.contains("__CHALIE_FIELDS"), "{output}");
    }

    /// A field for some actions carries them in its table entry, where the
    /// shared reader checks them against the action (wherever the action
    /// is declared: see chalie-core's `param_semantics` tests), and the
    /// struct lists them for `#[ability]`'s compile-time check.
    #[test]
    fn a_field_for_some_actions_carries_them() {
        let input: syn::DeriveInput = syn::parse_quote! {
            struct AudioParams {
                /// Beats per minute.
                #[param(min = 40, max = 220, clamp, actions = [generate])]
                bpm: Option<u32>,
                /// `generate` or `transcribe`.
                action: String,
            }
        };
        let output = super::expand_struct(input).to_string();
        assert!(!output.contains("compile_error"), "{output}");
        assert!(
            output.contains("name : \"bpm\" , description : \"Beats per minute.\" , kind : < Option < u32 > as __chalie :: ParamType > :: FIELD . kind , default : __chalie :: None , bounds : __chalie :: Bounds { min : __chalie :: Some (40f64) , max : __chalie :: Some (220f64) , clamp : true } , actions : & [\"generate\"]"),
            "{output}"
        );
        assert!(
            output.contains("FIELD_ACTIONS : & 'static [(& 'static str , & 'static [& 'static str])] = & [(\"bpm\" , & [\"generate\"])]"),
            "{output}"
        );
        assert!(
            output.contains("& (< Option < u32 > as __chalie :: ParamType > :: FIELD , (< String as __chalie :: ParamType > :: FIELD , ()))"),
            "{output}"
        );
    }

    /// The stub beside an error names the crate the user gave, so a crate
    /// that re-exports chalie under another path gets no follow-on errors.
    #[test]
    fn the_fallback_honours_the_crate_path() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[param(crate = reexport::chalie)]
            struct EchoParams {
                text: String,
            }
        };
        let output = super::expand_struct(input).to_string();
        assert!(output.contains("compile_error"), "{output}");
        assert!(
            output.contains("reexport :: chalie :: __private :: Params"),
            "{output}"
        );
        assert!(!output.contains("chalie_core"), "{output}");

        let input: syn::DeriveInput = syn::parse_quote! {
            #[param(crate = reexport::chalie)]
            enum Speed { Fast(u8) }
        };
        let output = super::expand_enum(input).to_string();
        assert!(
            output.contains("reexport :: chalie :: __private :: ParamType"),
            "{output}"
        );
        assert!(!output.contains("chalie_core"), "{output}");
    }
}
