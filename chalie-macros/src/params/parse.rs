//! Parsing and validating Params structs and enums into an owned model.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

use crate::ctxt::Ctxt;
use crate::{docs, names};

/// Field names chalie injects into every tool's parameters.
const RESERVED_FIELDS: &[&str] = &["act_summary", "async"];

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
    pub(crate) default: Option<TokenStream>,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    pub(crate) bound_span: Option<Span>,
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

/// Reads `#[param(crate = path)]` on the type.
fn container_crate(attrs: &[syn::Attribute], ctxt: &mut Ctxt) -> syn::Path {
    let mut krate = default_crate();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("param")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                krate = meta.value()?.parse()?;
                Ok(())
            } else {
                Err(meta.error("unknown `#[param]` key on the type; expected `crate`"))
            }
        });
        if let Err(error) = result {
            ctxt.push(error);
        }
    }
    krate
}

/// Parses a struct with named fields; every problem is recorded.
pub(crate) fn parse_struct(input: &syn::DeriveInput, ctxt: &mut Ctxt) -> Option<ParamsStruct> {
    let krate = container_crate(&input.attrs, ctxt);
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
    let fields = named
        .named
        .iter()
        .filter_map(|field| parse_field(field, ctxt))
        .collect();
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
    };
    for attr in field
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("param"))
    {
        let result =
            attr.parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                match key.as_str() {
                    "default" => {
                        let value: syn::Expr = meta.value()?.parse()?;
                        check_default_literal(&value)?;
                        if parsed.default.replace(value.to_token_stream()).is_some() {
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
                    other => return Err(meta.error(format!(
                        "unknown `#[param]` key `{other}`; expected one of `default`, `min`, `max`"
                    ))),
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
    if parsed.default.is_some() && is_option(&parsed.ty) {
        ctxt.error_spanned_by(&parsed.ty, "an `Option` field with a `default` would never be `None`; drop the `Option` or the default");
    }
    Some(parsed)
}

/// Defaults appear verbatim in the schema, so they are JSON-shaped literals.
fn check_default_literal(value: &syn::Expr) -> syn::Result<()> {
    match value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_) | syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_),
            ..
        }) => Ok(()),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(_) | syn::Lit::Float(_),
                ..
            }) => Ok(()),
            other => Err(syn::Error::new_spanned(
                other,
                "a default is a string, number or boolean literal",
            )),
        },
        other => Err(syn::Error::new_spanned(
            other,
            "a default is a string, number or boolean literal: it appears in the JSON Schema the model reads",
        )),
    }
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
pub(crate) fn parse_enum(input: &syn::DeriveInput, ctxt: &mut Ctxt) -> Option<ParamEnum> {
    let krate = container_crate(&input.attrs, ctxt);
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
        let mut value = names::suggest_snake_case(&variant.ident.to_string());
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
                    Err(meta.error("unknown `#[param]` key on a variant; expected `rename`"))
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
