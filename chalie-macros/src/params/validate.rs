//! Field types whose schema would be an object without properties, found
//! from the tokens alone.
//!
//! Some providers reject a tool whose parameters hold an object without
//! properties, and the rest let the model invent its fields. What the
//! tokens show (a `Value`, an open map) is refused here, at the type; what
//! only the schema shows (a `Schemars<T>` whose `T` holds a map, a struct
//! that contains itself) is refused by chalie-core's registry.

use crate::ctxt::Ctxt;

/// Map types whose keys the model would choose: each is an object with no
/// properties in a JSON Schema.
const OPEN_MAPS: &[&str] = &["HashMap", "BTreeMap", "IndexMap", "Map"];

/// Refuses a field type that is, or holds anywhere in its generic
/// arguments (`Option<Value>`, `Vec<HashMap<..>>`, `Schemars<BTreeMap<..>>`),
/// a type whose schema is an object without properties: each such type is
/// one error at its own tokens, naming the fix.
pub(crate) fn check_closed_type(ty: &syn::Type, ctxt: &mut Ctxt) {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return;
            };
            let written = last.ident.to_string();
            if is_json_value(&path.path) {
                ctxt.error_spanned_by(
                    ty,
                    format!(
                        "`{written}` takes any JSON, so its schema is an object without properties that some providers reject and the model fills with invented fields; describe the shape with a `#[derive(Params)]` struct, or take free text as a `String`"
                    ),
                );
                return;
            }
            if OPEN_MAPS.contains(&written.as_str()) {
                ctxt.error_spanned_by(
                    ty,
                    format!(
                        "`{written}` is an open map, so its schema is an object without properties that some providers reject and the model fills with invented keys; use a `Vec` of a `#[derive(Params)]` struct with a key field and a value field"
                    ),
                );
                return;
            }
            for segment in &path.path.segments {
                if let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments {
                    for argument in &arguments.args {
                        if let syn::GenericArgument::Type(inner) = argument {
                            check_closed_type(inner, ctxt);
                        }
                    }
                }
            }
        }
        syn::Type::Group(group) => check_closed_type(&group.elem, ctxt),
        syn::Type::Paren(paren) => check_closed_type(&paren.elem, ctxt),
        syn::Type::Array(array) => check_closed_type(&array.elem, ctxt),
        syn::Type::Slice(slice) => check_closed_type(&slice.elem, ctxt),
        syn::Type::Tuple(tuple) => tuple
            .elems
            .iter()
            .for_each(|inner| check_closed_type(inner, ctxt)),
        _ => {}
    }
}

/// Refuses a field type that names the struct itself (`Vec<Self>`,
/// `Option<Vec<Tree>>` inside `Tree`): a schema that contains itself cannot
/// be inlined, and where it recurs it is an object without properties.
/// A struct that recurs through another struct shows only in the schema,
/// and chalie-core's registry refuses it.
pub(crate) fn check_not_recursive(ty: &syn::Type, own: &syn::Ident, ctxt: &mut Ctxt) {
    let names_itself = |tokens: proc_macro2::TokenStream| {
        fn walk(tokens: proc_macro2::TokenStream, own: &syn::Ident) -> bool {
            tokens.into_iter().any(|token| match token {
                proc_macro2::TokenTree::Ident(word) => word == "Self" || word == *own,
                proc_macro2::TokenTree::Group(group) => walk(group.stream(), own),
                _ => false,
            })
        }
        walk(tokens, own)
    };
    if names_itself(quote::quote!(#ty)) {
        ctxt.error_spanned_by(
            ty,
            format!(
                "`{own}` contains itself, so its schema cannot be inlined and ends in an object without properties that some providers reject; give each nested level its own struct type, so the depth is fixed"
            ),
        );
    }
}

/// `Value`, `serde_json::Value` or `JsonValue`: the any-JSON type, as
/// imported or by its path. Another crate's `Value` (`toml::Value`) is
/// open all the same.
fn is_json_value(path: &syn::Path) -> bool {
    path.segments
        .last()
        .is_some_and(|segment| segment.ident == "Value" || segment.ident == "JsonValue")
        && path
            .segments
            .iter()
            .all(|segment| matches!(segment.arguments, syn::PathArguments::None))
}

#[cfg(test)]
mod tests {
    use super::{check_closed_type, check_not_recursive};
    use crate::ctxt::Ctxt;

    fn refused(ty: syn::Type) -> Vec<String> {
        let mut ctxt = Ctxt::default();
        check_closed_type(&ty, &mut ctxt);
        match ctxt.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|error| error.to_string()).collect(),
        }
    }

    /// Each open type is refused wherever it sits in the field's type,
    /// once; closed types pass.
    #[test]
    fn open_types_are_refused_at_any_depth() {
        for ty in [
            syn::parse_quote!(serde_json::Value),
            syn::parse_quote!(Option<Value>),
            syn::parse_quote!(Vec<std::collections::HashMap<String, u8>>),
            syn::parse_quote!(Schemars<BTreeMap<String, String>>),
            syn::parse_quote!(serde_json::Map<String, serde_json::Value>),
        ] {
            let messages = refused(ty);
            assert_eq!(messages.len(), 1, "{messages:?}");
            assert!(
                messages[0].contains("object without properties"),
                "{messages:?}"
            );
        }
        for ty in [
            syn::parse_quote!(String),
            syn::parse_quote!(Option<Vec<u32>>),
            syn::parse_quote!(Schemars<Window>),
            syn::parse_quote!(Values),
        ] {
            assert!(refused(ty).is_empty());
        }
    }

    /// A field naming its own struct, by `Self` or by name, is refused;
    /// a field naming another struct is not.
    #[test]
    fn a_struct_containing_itself_is_refused() {
        let own: syn::Ident = syn::parse_quote!(Tree);
        let refused = |ty: syn::Type| {
            let mut ctxt = Ctxt::default();
            check_not_recursive(&ty, &own, &mut ctxt);
            ctxt.check().is_err()
        };
        assert!(refused(syn::parse_quote!(Vec<Self>)));
        assert!(refused(syn::parse_quote!(Option<Vec<Tree>>)));
        assert!(!refused(syn::parse_quote!(Vec<Branch>)));
        assert!(!refused(syn::parse_quote!(Treehouse)));
    }
}
