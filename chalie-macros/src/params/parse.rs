//! Parsing and validating Params structs and enums into an owned model.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;
use crate::{docs, names};

/// Field names chalie injects into every tool's parameters.
const RESERVED_FIELDS: &[&str] = &["act_summary", "async"];

/// The keys `#[param]` takes on a field.
const FIELD_KEYS: &[&str] = &["default", "min", "max", "clamp", "actions"];

/// The field that names the action, in a struct whose fields may belong
/// to some actions only.
pub(crate) const ACTION_FIELD: &str = "action";

/// A path key as written, for messages.
fn key_text(path: &syn::Path) -> String {
    path.get_ident()
        .map_or_else(|| quote::quote!(#path).to_string(), ToString::to_string)
}

/// "unknown `#[param]` key `defualt`; expected one of …", with the valid
/// key a typo (or a known synonym) is closest to.
fn unknown_key(written: &str, valid: &[&str], synonyms: &[(&str, &str)]) -> String {
    let list = valid
        .iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let expected = if valid.len() == 1 {
        format!("expected {list}")
    } else {
        format!("expected one of {list}")
    };
    let meant = synonyms
        .iter()
        .find(|(synonym, _)| *synonym == written)
        .map(|(_, key)| *key)
        .or_else(|| names::closest(written, valid));
    match meant {
        Some(key) => {
            format!("unknown `#[param]` key `{written}`; did you mean `{key}`? {expected}")
        }
        None => format!("unknown `#[param]` key `{written}`; {expected}"),
    }
}

/// A validated `#[derive(Params)]` struct.
pub(crate) struct ParamsStruct {
    pub(crate) krate: syn::Path,
    pub(crate) ident: syn::Ident,
    pub(crate) generics: syn::Generics,
    pub(crate) fields: Vec<Field>,
}

/// One documented field.
pub(crate) struct Field {
    pub(crate) ident: syn::Ident,
    pub(crate) name: String,
    pub(crate) ty: syn::Type,
    pub(crate) description: String,
    pub(crate) default: Option<FieldDefault>,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    pub(crate) bound_span: Option<Span>,
    /// `#[param(clamp)]`, by the key's span.
    pub(crate) clamp: Option<Span>,
    /// `#[param(actions = [...])]`: the actions the field belongs to.
    pub(crate) actions: Option<FieldActions>,
}

/// The actions a field belongs to, as listed.
pub(crate) struct FieldActions {
    pub(crate) names: Vec<String>,
    /// The `actions` key.
    pub(crate) span: Span,
}

/// `#[param(default = …)]`: a JSON-shaped literal.
pub(crate) struct FieldDefault {
    pub(crate) literal: DefaultLit,
    pub(crate) span: Span,
    /// The literal as written, for messages.
    pub(crate) written: String,
}

/// The value of a default literal, sign included.
pub(crate) enum DefaultLit {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
}

/// A validated `#[derive(ParamEnum)]` enum of unit variants.
pub(crate) struct ParamEnum {
    pub(crate) krate: syn::Path,
    pub(crate) ident: syn::Ident,
    pub(crate) variants: Vec<(syn::Ident, String)>,
}

fn default_crate() -> syn::Path {
    syn::parse_quote!(::chalie_core)
}

/// Reads `#[param(crate = path)]` on the type; `::chalie_core` when absent
/// or malformed (the error is recorded), so a fallback still names a crate.
pub(crate) fn container_crate(attrs: &[syn::Attribute], ctxt: &mut Ctxt) -> syn::Path {
    let mut krate = default_crate();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("param")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                krate = meta.value()?.parse()?;
                Ok(())
            } else {
                Err(meta.error(unknown_key(&key_text(&meta.path), &["crate"], &[])))
            }
        });
        if let Err(error) = result {
            ctxt.push(error);
        }
    }
    krate
}

/// Parses a struct with named fields; every problem is recorded.
pub(crate) fn parse_struct(
    input: &syn::DeriveInput,
    krate: syn::Path,
    ctxt: &mut Ctxt,
) -> Option<ParamsStruct> {
    let syn::Data::Struct(data) = &input.data else {
        ctxt.error_spanned_by(
            &input.ident,
            "`#[derive(Params)]` goes on a struct with named fields; for a choice of values use `#[derive(ParamEnum)]`",
        );
        return None;
    };
    let named = match &data.fields {
        syn::Fields::Named(named) => named,
        syn::Fields::Unnamed(unnamed) => {
            ctxt.error_spanned_by(unnamed, "Params fields need names: the model sees them as JSON properties; use `struct Name { field: Type }`");
            return None;
        }
        syn::Fields::Unit => {
            ctxt.error_spanned_by(&input.ident, "a Params struct needs at least one field; an ability without inputs takes no Params argument");
            return None;
        }
    };
    if named.named.is_empty() {
        ctxt.error_spanned_by(
            &input.ident,
            "a Params struct needs at least one field (an argument object without properties is dropped from model-visible schemas); an ability without inputs takes no Params argument",
        );
    }
    if !input.generics.params.is_empty() {
        ctxt.error_spanned_by(
            &input.generics,
            "a Params struct cannot be generic: its schema is fixed at compile time",
        );
    }
    let fields: Vec<Field> = named
        .named
        .iter()
        .filter_map(|field| parse_field(field, ctxt))
        .collect();
    for field in &fields {
        super::validate::check_not_recursive(&field.ty, &input.ident, ctxt);
    }
    check_field_actions(&input.ident, &fields, ctxt);
    Some(ParamsStruct {
        krate,
        ident: input.ident.clone(),
        generics: input.generics.clone(),
        fields,
    })
}

fn parse_field(field: &syn::Field, ctxt: &mut Ctxt) -> Option<Field> {
    let ident = field.ident.clone()?;
    let name = ident.to_string().trim_start_matches("r#").to_owned();
    if RESERVED_FIELDS.contains(&name.as_str()) {
        ctxt.error_spanned_by(
            &ident,
            format!(
                "`{name}` is reserved: chalie adds it to every tool's parameters; rename the field"
            ),
        );
    } else if let Some(problem) = names::snake_case_problem("parameter", &name) {
        ctxt.error_spanned_by(&ident, problem);
    }
    super::validate::check_closed_type(&field.ty, ctxt);
    let description = docs::collect(&field.attrs);
    if description.is_empty() {
        ctxt.error_spanned_by(
            &ident,
            format!(
                "parameter `{name}` has no description; add a `///` comment, the model reads it"
            ),
        );
    }
    let mut parsed = Field {
        ident,
        name,
        ty: field.ty.clone(),
        description,
        default: None,
        min: None,
        max: None,
        bound_span: None,
        clamp: None,
        actions: None,
    };
    for attr in field
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("param"))
    {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "default" => {
                    let value: syn::Expr = meta.value()?.parse()?;
                    let default = default_literal(&value)?;
                    if parsed.default.replace(default).is_some() {
                        return Err(meta.error("duplicate `default`"));
                    }
                }
                "min" | "max" => {
                    let value: syn::Expr = meta.value()?.parse()?;
                    let number = number_literal(&value)?;
                    parsed.bound_span.get_or_insert_with(|| {
                        meta.path
                            .get_ident()
                            .map_or_else(Span::call_site, syn::Ident::span)
                    });
                    let slot = if key == "min" {
                        &mut parsed.min
                    } else {
                        &mut parsed.max
                    };
                    if slot.replace(number).is_some() {
                        return Err(meta.error(format!("duplicate `{key}`")));
                    }
                }
                "clamp" => {
                    if meta.input.peek(syn::Token![=]) {
                        return Err(meta.error(
                            "`clamp` takes no value: write `clamp` beside `min` and `max`",
                        ));
                    }
                    if parsed.clamp.replace(meta.path.span()).is_some() {
                        return Err(meta.error("duplicate `clamp`"));
                    }
                }
                "actions" => {
                    let list: syn::ExprArray = meta.value()?.parse()?;
                    let names = action_list(&list)?;
                    let actions = FieldActions {
                        names,
                        span: meta.path.span(),
                    };
                    if parsed.actions.replace(actions).is_some() {
                        return Err(meta.error("duplicate `actions`"));
                    }
                }
                other => {
                    return Err(meta.error(unknown_key(
                        other,
                        FIELD_KEYS,
                        &[
                            ("minimum", "min"),
                            ("maximum", "max"),
                            ("clamped", "clamp"),
                            ("saturate", "clamp"),
                            ("action", "actions"),
                            ("only", "actions"),
                        ],
                    )));
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            ctxt.push(error);
        }
    }
    if let (Some(min), Some(max)) = (parsed.min, parsed.max)
        && min > max
    {
        ctxt.error_spanned_by(
            &parsed.ident,
            format!("`min = {min}` is greater than `max = {max}`"),
        );
    }
    if let Some(clamp) = parsed.clamp
        && parsed.min.is_none()
        && parsed.max.is_none()
    {
        ctxt.push(syn::Error::new(
            clamp,
            "`clamp` needs a range to clamp to: add `min = …`, `max = …` or both",
        ));
    }
    check_default_bounds(&parsed, ctxt);
    if parsed.default.is_some() && is_option(&parsed.ty) {
        ctxt.error_spanned_by(&parsed.ty, "an `Option` field with a `default` would never be `None`; drop the `Option` or the default");
    }
    Some(parsed)
}

/// The actions listed in `actions = [generate, remix]`: snake_case names,
/// each once, at least one.
fn action_list(list: &syn::ExprArray) -> syn::Result<Vec<String>> {
    if list.elems.is_empty() {
        return Err(syn::Error::new_spanned(
            list,
            "list the actions the field belongs to, e.g. `actions = [generate]`; a field for every action needs no `actions`",
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for element in &list.elems {
        let syn::Expr::Path(path) = element else {
            return Err(syn::Error::new_spanned(
                element,
                "expected an action name, e.g. `actions = [generate]`",
            ));
        };
        let ident = path.path.require_ident()?;
        let name = ident.to_string();
        if let Some(problem) = names::snake_case_problem("action", &name) {
            return Err(syn::Error::new_spanned(ident, problem));
        }
        if names.contains(&name) {
            return Err(syn::Error::new_spanned(
                ident,
                format!("`{name}` is listed twice"),
            ));
        }
        names.push(name);
    }
    Ok(names)
}

/// A field that belongs to some actions only needs an `action` field
/// beside it to tell which action was called, and must be optional:
/// every other action leaves it out.
fn check_field_actions(ident: &syn::Ident, fields: &[Field], ctxt: &mut Ctxt) {
    let has_action = fields.iter().any(|field| field.name == ACTION_FIELD);
    for field in fields {
        let Some(actions) = &field.actions else {
            continue;
        };
        if field.name == ACTION_FIELD {
            ctxt.push(syn::Error::new(
                actions.span,
                "`action` names the action called and belongs to every action; drop `actions` here",
            ));
        } else if !has_action {
            ctxt.push(syn::Error::new(
                actions.span,
                format!(
                    "`{ident}` has no `action` field to tell which action was called; add `action: String` (or a `#[derive(ParamEnum)]` enum) beside `{}`",
                    field.name
                ),
            ));
        } else if field.default.is_none() && !is_option(&field.ty) {
            ctxt.error_spanned_by(
                &field.ty,
                format!(
                    "`{}` is only for some actions, so the others leave it out: make it an `Option` or give it a `default`",
                    field.name
                ),
            );
        }
    }
}

/// A numeric default lies within the field's own `min` and `max`: the
/// parser checks the default like a value the model sent.
fn check_default_bounds(field: &Field, ctxt: &mut Ctxt) {
    let Some(default) = &field.default else {
        return;
    };
    let value = match default.literal {
        DefaultLit::Int(number) => number as f64,
        DefaultLit::Float(number) => number,
        DefaultLit::Str(_) | DefaultLit::Bool(_) => return,
    };
    let allowed = match (field.min, field.max) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("of at least {min}"),
        (None, Some(max)) => format!("of at most {max}"),
        (None, None) => return,
    };
    let broken = match (field.min, field.max) {
        (Some(min), _) if value < min => format!("less than `min = {min}`"),
        (_, Some(max)) if value > max => format!("greater than `max = {max}`"),
        _ => return,
    };
    ctxt.push(syn::Error::new(
        default.span,
        format!(
            "default `{}` is {broken}; write a number {allowed}",
            default.written
        ),
    ));
}

/// Defaults appear verbatim in the schema, so they are JSON-shaped literals.
fn default_literal(value: &syn::Expr) -> syn::Result<FieldDefault> {
    let not_a_literal = |node: &dyn ToTokens| {
        syn::Error::new_spanned(
            node,
            "a default is a string, number or boolean literal: it appears in the JSON Schema the model reads",
        )
    };
    let (negative, literal) = match value {
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => (true, &**expr),
        other => (false, other),
    };
    let syn::Expr::Lit(syn::ExprLit { lit, .. }) = literal else {
        return Err(not_a_literal(literal));
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let parsed = match lit {
        syn::Lit::Int(int) if negative => DefaultLit::Int(-int.base10_parse::<i128>()?),
        syn::Lit::Int(int) => DefaultLit::Int(int.base10_parse::<i128>()?),
        syn::Lit::Float(float) => DefaultLit::Float(sign * float.base10_parse::<f64>()?),
        syn::Lit::Str(text) if !negative => DefaultLit::Str(text.value()),
        syn::Lit::Bool(flag) if !negative => DefaultLit::Bool(flag.value),
        _ => return Err(not_a_literal(value)),
    };
    Ok(FieldDefault {
        literal: parsed,
        span: value.span(),
        written: value.to_token_stream().to_string().replace("- ", "-"),
    })
}

fn number_literal(value: &syn::Expr) -> syn::Result<f64> {
    let (negative, literal) = match value {
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => (true, &**expr),
        other => (false, other),
    };
    let number = match literal {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse::<f64>()?,
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(float),
            ..
        }) => float.base10_parse::<f64>()?,
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "`min` and `max` take a number literal",
            ));
        }
    };
    Ok(if negative { -number } else { number })
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.segments.last().is_some_and(|segment| segment.ident == "Option"))
}

/// Parses an enum of unit variants; each becomes a snake_case string value.
pub(crate) fn parse_enum(
    input: &syn::DeriveInput,
    krate: syn::Path,
    ctxt: &mut Ctxt,
) -> Option<ParamEnum> {
    let syn::Data::Enum(data) = &input.data else {
        ctxt.error_spanned_by(&input.ident, "`#[derive(ParamEnum)]` goes on an enum of unit variants; for an object use `#[derive(Params)]`");
        return None;
    };
    if data.variants.is_empty() {
        ctxt.error_spanned_by(&input.ident, "a ParamEnum needs at least one variant");
    }
    let mut variants = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, syn::Fields::Unit) {
            ctxt.error_spanned_by(
                &variant.fields,
                "ParamEnum variants carry no data: each is one string value the model may choose",
            );
            continue;
        }
        let mut value = names::to_snake_case(&variant.ident.to_string());
        for attr in variant
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("param"))
        {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let literal: syn::LitStr = meta.value()?.parse()?;
                    value = literal.value();
                    Ok(())
                } else {
                    Err(meta.error(unknown_key(&key_text(&meta.path), &["rename"], &[])))
                }
            });
            if let Err(error) = result {
                ctxt.push(error);
            }
        }
        variants.push((variant.ident.clone(), value));
    }
    Some(ParamEnum {
        krate,
        ident: input.ident.clone(),
        variants,
    })
}
