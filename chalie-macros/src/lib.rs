//! Procedural macros for chalie. Use them through `chalie-core`, which
//! re-exports them and documents every key; generated code refers only to
//! `::chalie_core::__private`, so this crate has no public API of its own.

mod ability;
mod ctxt;
mod docs;
mod names;
mod params;

use proc_macro::TokenStream;

/// Turns a free function into a registered ability. See `chalie_core::ability`.
#[proc_macro_attribute]
pub fn ability(attr: TokenStream, item: TokenStream) -> TokenStream {
    ability::expand(attr.into(), item.into()).into()
}

/// Derives `chalie_core::Params` for a struct with named, documented fields.
#[proc_macro_derive(Params, attributes(param))]
pub fn derive_params(input: TokenStream) -> TokenStream {
    params::expand_struct(syn::parse_macro_input!(input as syn::DeriveInput)).into()
}

/// Derives `chalie_core::params::ParamType` for an enum of unit variants.
#[proc_macro_derive(ParamEnum, attributes(param))]
pub fn derive_param_enum(input: TokenStream) -> TokenStream {
    params::expand_enum(syn::parse_macro_input!(input as syn::DeriveInput)).into()
}
