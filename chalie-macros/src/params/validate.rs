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
    use super::check_closed_type;
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
}
