//! `#[ability]`: parse the attribute and the function, validate both, expand.

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;

/// Entry point of `#[ability]`. On any error the untouched function is
/// emitted beside the errors, so the user sees only the intended message.
///
/// The function is emitted as the tokens it came in, and only its
/// attributes and signature are parsed: its body is never walked, so a long
/// body costs the macro nothing.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let (function, body) = match parse_head(&item) {
        Ok(parsed) => parsed,
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
    match try_expand(attr, &function, &body, &item) {
        Ok(tokens) => tokens,
        Err(error) => {
            let errors = error.to_compile_error();
            // A method stays as it is: a type cannot be declared in an `impl`.
            let fallback = if function.sig.receiver().is_some() {
                item
            } else {
                expand::fallback(&function, &item, &krate)
            };
            quote! { #errors #fallback }
        }
    }
}

/// The function's attributes, visibility and signature, with an empty
/// block standing in for its body, and the body's tokens.
fn parse_head(item: &TokenStream) -> syn::Result<(syn::ItemFn, TokenStream)> {
    let mut trees: Vec<proc_macro2::TokenTree> = item.clone().into_iter().collect();
    let body = match trees.pop() {
        Some(proc_macro2::TokenTree::Group(body))
            if body.delimiter() == proc_macro2::Delimiter::Brace =>
        {
            body
        }
        // Not a function with a body: syn says what it is instead.
        _ => {
            return syn::parse2::<syn::ItemFn>(item.clone())
                .map(|function| (function, TokenStream::new()));
        }
    };
    let head: TokenStream = trees.into_iter().collect();
    let parser = |input: syn::parse::ParseStream<'_>| {
        Ok(syn::ItemFn {
            attrs: input.call(syn::Attribute::parse_outer)?,
            vis: input.parse()?,
            sig: input.parse()?,
            block: Box::new(syn::Block {
                brace_token: syn::token::Brace(body.delim_span()),
                stmts: Vec::new(),
            }),
        })
    };
    let function = syn::parse::Parser::parse2(parser, head)?;
    Ok((function, body.stream()))
}

fn try_expand(
    attr: TokenStream,
    function: &syn::ItemFn,
    body: &TokenStream,
    item: &TokenStream,
) -> syn::Result<TokenStream> {
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
    let ability = validate::validate(attrs, signature, function, body, &mut ctxt);
    ctxt.check()?;
    Ok(expand::expand(&ability, function, item))
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

    /// The body is scanned for literal error codes without being parsed:
    /// found nested and behind a path, left alone when the code is not a
    /// literal on its own.
    #[test]
    fn error_codes_are_found_in_the_body_tokens() {
        let attr =
            quote::quote!(examples = ["a one", "a two", "a three", "a four", "a five", "a six"]);
        let item = quote::quote! {
            /// Gets the weather.
            fn weather() -> ToolResult {
                if true {
                    return chalie_core::ToolResult::error("NoSuchCity", "no such city", "pick another");
                }
                let fine = ToolResult::error("ok-code".to_string(), "", "");
                ToolResult::error(code(), "", "")
            }
        };
        let output = super::expand(attr, item).to_string();
        assert_eq!(output.matches("compile_error").count(), 1, "{output}");
        assert!(output.contains("use `no-such-city`"), "{output}");
    }
}
