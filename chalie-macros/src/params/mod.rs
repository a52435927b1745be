//! `#[derive(Params)]` and `#[derive(ParamEnum)]`.

mod expand;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;

/// Entry point of `#[derive(Params)]`. On error, a stub impl is emitted
/// beside the errors so that uses of the type raise no follow-on errors.
pub(crate) fn expand_struct(input: syn::DeriveInput) -> TokenStream {
    let mut ctxt = Ctxt::default();
    let parsed = parse::parse_struct(&input, &mut ctxt);
    match (ctxt.check(), parsed) {
        (Ok(()), Some(params)) => expand::params_impl(&params),
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let fallback = expand::params_fallback(&input);
            quote! { #errors #fallback }
        }
    }
}

/// Entry point of `#[derive(ParamEnum)]`.
pub(crate) fn expand_enum(input: syn::DeriveInput) -> TokenStream {
    let mut ctxt = Ctxt::default();
    let parsed = parse::parse_enum(&input, &mut ctxt);
    match (ctxt.check(), parsed) {
        (Ok(()), Some(param_enum)) => expand::enum_impl(&param_enum),
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let fallback = expand::enum_fallback(&input);
            quote! { #errors #fallback }
        }
    }
}
