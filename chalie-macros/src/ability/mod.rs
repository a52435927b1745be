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
    let krate = parse::crate_path(&attr);
    match try_expand(attr, &function) {
        Ok(tokens) => tokens,
        Err(error) => {
            let errors = error.to_compile_error();
            // A method stays as it is: a type cannot be declared in an `impl`.
            let fallback = if function.sig.receiver().is_some() {
                quote!(#function)
            } else {
                expand::fallback(&function, &krate)
            };
            quote! { #errors #fallback }
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

#[cfg(test)]
mod tests {
    /// After an error the ability's type is still declared, under the
    /// user's crate path, so code naming it raises no "cannot find type".
    #[test]
    fn the_fallback_declares_the_type() {
        let attr = quote::quote!(crate = reexport::chalie, examples = ["too few"]);
        let item = quote::quote! {
            /// Gets the weather.
            fn weather() -> ToolResult { ToolResult::success("") }
        };
        let output = super::expand(attr, item).to_string();
        assert!(output.contains("compile_error"), "{output}");
        assert!(output.contains("struct weather"), "{output}");
        assert!(
            output.contains("impl reexport :: chalie :: Ability for weather"),
            "{output}"
        );
        assert!(!output.contains("chalie_core"), "{output}");
        assert!(!output.contains("distributed_slice"), "{output}");
    }
}
