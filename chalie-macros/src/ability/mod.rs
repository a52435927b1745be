//! `#[ability]`: parse the attribute and the function, validate both, expand.

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;

/// Entry point of `#[ability]`. On any error the untouched function is
/// emitted beside the errors, so the user sees only the intended message.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            let message = syn::Error::new(
                error.span(),
                "`#[ability]` goes on a free `fn` or `async fn`",
            )
            .to_compile_error();
            return quote! { #message #item };
        }
    };
    match try_expand(attr, &function) {
        Ok(tokens) => tokens,
        Err(error) => {
            let errors = error.to_compile_error();
            quote! { #errors #function }
        }
    }
}

fn try_expand(attr: TokenStream, function: &syn::ItemFn) -> syn::Result<TokenStream> {
    let mut ctxt = Ctxt::default();
    let attrs = parse::parse_attrs(attr, &mut ctxt);
    let signature = parse::parse_signature(function, &mut ctxt);
    ctxt.check()?;
    let (Some(attrs), Some(signature)) = (attrs, signature) else {
        // Unreachable in practice: a `None` always comes with a recorded error.
        return Err(syn::Error::new_spanned(
            &function.sig.ident,
            "invalid `#[ability]`",
        ));
    };
    let mut ctxt = Ctxt::default();
    let ability = validate::validate(attrs, signature, function, &mut ctxt);
    ctxt.check()?;
    Ok(expand::expand(&ability, function))
}
