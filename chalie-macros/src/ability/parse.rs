//! Parsing `#[ability(...)]` keys and the function signature into a small
//! owned model that keeps the span of every value.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;

/// Every key `#[ability]` accepts, in the order the docs list them.
pub(crate) const VALID_KEYS: &[&str] = &[
    "name",
    "summary",
    "examples",
    "tooltip",
    "discoverable",
    "actions",
    "internal",
    "effect",
    "version",
    "toolset",
    "permission",
    "rate_limit",
    "tags",
    "input_examples",
    "crate",
];

/// Words users reach for, and the key that means them.
const SYNONYMS: &[(&str, &str)] = &[
    ("description", "summary"),
    ("desc", "summary"),
    ("title", "tooltip"),
    ("example", "examples"),
    ("read_only", "effect"),
    ("rate", "rate_limit"),
    ("limit", "rate_limit"),
    ("ratelimit", "rate_limit"),
    ("permissions", "tags"),
    ("requires", "tags"),
    ("input_example", "input_examples"),
    ("example_calls", "input_examples"),
    ("calls", "input_examples"),
];

/// Keys that would let an ability supply the descriptor chalie assembles.
const DESCRIPTOR_KEYS: &[&str] = &[
    "descriptor",
    "definition",
    "tool_definition",
    "parameters",
    "schema",
    "input_schema",
    "json_schema",
];

/// The attribute's keys, each with the tokens it came from.
#[derive(Default)]
pub(crate) struct AbilityAttrs {
    pub(crate) krate: Option<syn::Path>,
    pub(crate) name: Option<syn::LitStr>,
    pub(crate) summary: Option<syn::LitStr>,
    pub(crate) examples: Option<Examples>,
    pub(crate) tooltip: Option<syn::LitStr>,
    pub(crate) discoverable: Option<syn::LitBool>,
    pub(crate) actions: Option<Vec<ActionAttr>>,
    pub(crate) internal: Option<syn::LitBool>,
    pub(crate) effect: Option<syn::Ident>,
    pub(crate) version: Option<syn::LitStr>,
    pub(crate) toolset: Option<syn::LitStr>,
    /// `permission = path::to::fn`: derives the permission from the
    /// parsed parameters.
    pub(crate) permission: Option<syn::Path>,
    /// `rate_limit = "3/hour"`, as written.
    pub(crate) rate_limit: Option<syn::LitStr>,
    /// `tags = ["orders:read"]`: the permission tags a dispatcher must be
    /// granted to run the ability.
    pub(crate) tags: Option<syn::ExprArray>,
    /// `input_examples = [{ "location": "Rome, IT" }]`: whole example
    /// calls, checked against the Params struct when the crate compiles.
    pub(crate) input_examples: Option<InputExamples>,
}

/// `input_examples = [...]`: the example calls, with the span of the list.
pub(crate) struct InputExamples {
    pub(crate) span: proc_macro2::Span,
    pub(crate) examples: Vec<ExampleObject>,
}

/// One `{ "key": value, ... }` of an input example, with its braces' span.
pub(crate) struct ExampleObject {
    pub(crate) span: proc_macro2::Span,
    pub(crate) fields: Vec<ExampleField>,
}

/// One `"key": value` of an example object.
pub(crate) struct ExampleField {
    pub(crate) key: String,
    pub(crate) key_span: proc_macro2::Span,
    pub(crate) value: ExampleLit,
}

/// One value of an input example, with its span and its text as written
/// (arrays and objects shortened to `[...]` and `{...}`), for messages.
pub(crate) struct ExampleLit {
    pub(crate) kind: ExampleKind,
    pub(crate) span: proc_macro2::Span,
    pub(crate) written: String,
}

/// The JSON shapes an input example value takes.
pub(crate) enum ExampleKind {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Array(Vec<ExampleLit>),
    Object(ExampleObject),
}

/// `examples = [...]` with the span of the whole list.
pub(crate) struct Examples {
    pub(crate) list: syn::ExprArray,
    pub(crate) phrases: Vec<syn::LitStr>,
}

/// One `action = [required, params]` entry of `actions(...)`.
pub(crate) struct ActionAttr {
    pub(crate) name: syn::Ident,
    pub(crate) required: Vec<syn::Ident>,
}

/// Parses the attribute arguments; every problem is recorded in `ctxt`.
pub(crate) fn parse_attrs(attr: TokenStream, ctxt: &mut Ctxt) -> Option<AbilityAttrs> {
    let mut attrs = AbilityAttrs::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        macro_rules! once {
            ($field:ident, $value:expr) => {{
                let value = $value;
                if attrs.$field.is_some() {
                    return Err(meta.error(format!("duplicate `{key}` key; give it once")));
                }
                attrs.$field = Some(value);
            }};
        }
        match key.as_str() {
            "crate" => once!(krate, meta.value()?.parse::<syn::Path>()?),
            "name" => once!(name, meta.value()?.parse::<syn::LitStr>()?),
            "summary" => once!(summary, meta.value()?.parse::<syn::LitStr>()?),
            "tooltip" => once!(tooltip, meta.value()?.parse::<syn::LitStr>()?),
            "version" => once!(version, meta.value()?.parse::<syn::LitStr>()?),
            "toolset" => once!(toolset, meta.value()?.parse::<syn::LitStr>()?),
            "permission" => once!(permission, meta.value()?.parse::<syn::Path>()?),
            "rate_limit" => {
                let value: syn::Expr = meta.value()?.parse()?;
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(literal),
                    ..
                }) = value
                else {
                    return Err(syn::Error::new_spanned(
                        value,
                        "`rate_limit` takes a string of calls per period, e.g. `rate_limit = \"3/hour\"`",
                    ));
                };
                once!(rate_limit, literal)
            }
            "tags" => once!(tags, meta.value()?.parse::<syn::ExprArray>()?),
            "input_examples" => once!(input_examples, parse_input_examples(meta.value()?)?),
            "discoverable" => once!(discoverable, meta.value()?.parse::<syn::LitBool>()?),
            "internal" => {
                let flag = if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::LitBool>()?
                } else {
                    syn::LitBool::new(true, meta.path.span())
                };
                once!(internal, flag)
            }
            "effect" => {
                let effect = meta.value()?.parse::<syn::Ident>()?;
                if effect != "read" && effect != "write" {
                    let written = effect.to_string();
                    let meant = crate::names::closest(&written, &["read", "write"])
                        .or_else(|| written.starts_with("read").then_some("read"))
                        .map(|value| format!("did you mean `{value}`? "))
                        .unwrap_or_default();
                    return Err(syn::Error::new_spanned(
                        &effect,
                        format!("unknown effect `{effect}`; {meant}expected `read` or `write`"),
                    ));
                }
                once!(effect, effect)
            }
            "examples" => once!(examples, parse_examples(meta.value()?)?),
            "actions" => {
                let mut actions = Vec::new();
                meta.parse_nested_meta(|action| {
                    let name = action.path.require_ident()?.clone();
                    if action.input.peek(syn::Token![.]) || action.input.peek(syn::Token![-]) {
                        // `delete.event` parses as a path followed by `.`;
                        // say what is wrong instead of "expected `=`".
                        let separator: proc_macro2::TokenTree = action.input.parse()?;
                        let rest: syn::Ident = action.input.parse()?;
                        let written = format!("{name}{separator}{rest}");
                        let problem = crate::names::snake_case_problem("action", &written)
                            .unwrap_or_else(|| format!("invalid action name `{written}`"));
                        return Err(syn::Error::new(
                            name.span().join(rest.span()).unwrap_or_else(|| name.span()),
                            problem,
                        ));
                    }
                    let list = action.value()?.parse::<syn::ExprArray>()?;
                    let required = list
                        .elems
                        .iter()
                        .map(|element| match element {
                            syn::Expr::Path(path) => path.path.require_ident().cloned(),
                            other => Err(syn::Error::new_spanned(
                                other,
                                "expected a parameter name, e.g. `store = [content, tags]`",
                            )),
                        })
                        .collect::<syn::Result<Vec<_>>>()?;
                    actions.push(ActionAttr { name, required });
                    Ok(())
                })?;
                once!(actions, actions)
            }
            other if DESCRIPTOR_KEYS.contains(&other) => {
                return Err(meta.error(format!(
                    "`{other}` cannot be supplied: chalie-core assembles the descriptor the model sees from `name`, `summary`, `examples`, `tooltip` and the `#[derive(Params)]` type; change those instead"
                )));
            }
            other => {
                let valid = VALID_KEYS
                    .iter()
                    .map(|key| format!("`{key}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                // A typo of a key, or of a word that means one (`description`).
                let meant = SYNONYMS
                    .iter()
                    .map(|(synonym, key)| (*synonym, *key))
                    .chain(VALID_KEYS.iter().map(|key| (*key, *key)))
                    .find(|(word, _)| *word == other)
                    .map(|(_, key)| key)
                    .or_else(|| {
                        let words: Vec<&str> = SYNONYMS
                            .iter()
                            .map(|(synonym, _)| *synonym)
                            .chain(VALID_KEYS.iter().copied())
                            .collect();
                        let word = crate::names::closest(other, &words)?;
                        SYNONYMS
                            .iter()
                            .find(|(synonym, _)| *synonym == word)
                            .map_or(Some(word), |(_, key)| Some(*key))
                    });
                let message = match meant {
                    Some(key) => format!(
                        "unknown `#[ability]` key `{other}`; did you mean `{key}`? expected one of {valid}"
                    ),
                    None => format!("unknown `#[ability]` key `{other}`; expected one of {valid}"),
                };
                return Err(meta.error(message));
            }
        }
        Ok(())
    });
    match syn::parse::Parser::parse2(parser, attr) {
        Ok(()) => Some(attrs),
        Err(error) => {
            ctxt.push(error);
            None
        }
    }
}

/// The `crate = path` key alone, read leniently: the fallback emitted
/// beside other errors in the attribute still names the right crate.
pub(crate) fn crate_path(attr: &TokenStream) -> syn::Path {
    let tokens: Vec<proc_macro2::TokenTree> = attr.clone().into_iter().collect();
    let mut index = 0;
    while index + 1 < tokens.len() {
        let is_key = matches!(&tokens[index], proc_macro2::TokenTree::Ident(ident) if ident == "crate")
            && matches!(&tokens[index + 1], proc_macro2::TokenTree::Punct(punct) if punct.as_char() == '=')
            && (index == 0
                || matches!(&tokens[index - 1], proc_macro2::TokenTree::Punct(punct) if punct.as_char() == ','));
        if is_key {
            let value: TokenStream = tokens[index + 2..]
                .iter()
                .take_while(|token| !matches!(token, proc_macro2::TokenTree::Punct(punct) if punct.as_char() == ','))
                .cloned()
                .collect();
            if let Ok(path) = syn::parse2(value) {
                return path;
            }
        }
        index += 1;
    }
    syn::parse_quote!(::chalie_core)
}

fn parse_examples(input: syn::parse::ParseStream<'_>) -> syn::Result<Examples> {
    let list = input.parse::<syn::ExprArray>()?;
    let phrases = list
        .elems
        .iter()
        .map(|element| match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Ok(text.clone()),
            other => Err(syn::Error::new_spanned(
                other,
                "an example is a string literal: a phrase a user would say",
            )),
        })
        .collect::<syn::Result<Vec<_>>>()?;
    Ok(Examples { list, phrases })
}

/// What an input example value can be, for the messages that say so.
const EXAMPLE_VALUE: &str = "an input example value is JSON: a string, a number, `true`, `false`, `null`, an array `[...]` or an object `{...}`";

/// `[{ "key": value, ... }, ...]`: JSON-like object literals, one per
/// example call. Keys are string literals as in JSON; a bare identifier
/// (`location: "Rome"`) reads the same.
fn parse_input_examples(input: syn::parse::ParseStream<'_>) -> syn::Result<InputExamples> {
    if !input.peek(syn::token::Bracket) {
        return Err(input.error(
            "`input_examples` takes a list of example calls, e.g. `input_examples = [{ \"location\": \"Rome, IT\" }]`",
        ));
    }
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut examples = Vec::new();
    while !content.is_empty() {
        if !content.peek(syn::token::Brace) {
            return Err(content.error(
                "an input example is an object of arguments, e.g. `{ \"location\": \"Rome, IT\" }`",
            ));
        }
        examples.push(parse_example_object(&content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<syn::Token![,]>()?;
    }
    Ok(InputExamples {
        span: bracket.span.join(),
        examples,
    })
}

fn parse_example_object(input: syn::parse::ParseStream<'_>) -> syn::Result<ExampleObject> {
    use syn::ext::IdentExt;
    let content;
    let brace = syn::braced!(content in input);
    let mut fields = Vec::new();
    while !content.is_empty() {
        let (key, key_span) = if content.peek(syn::LitStr) {
            let literal = content.parse::<syn::LitStr>()?;
            (literal.value(), literal.span())
        } else if content.peek(syn::Ident::peek_any) {
            let ident = content.call(syn::Ident::parse_any)?;
            (ident.unraw().to_string(), ident.span())
        } else {
            return Err(content.error("expected a field name, e.g. `\"location\": \"Rome, IT\"`"));
        };
        if !content.peek(syn::Token![:]) {
            return Err(content.error(format!(
                "expected `:` after `{key}`; write the field as in JSON, e.g. `\"{key}\": ...`"
            )));
        }
        content.parse::<syn::Token![:]>()?;
        let value = parse_example_value(&content)?;
        fields.push(ExampleField {
            key,
            key_span,
            value,
        });
        if content.is_empty() {
            break;
        }
        content.parse::<syn::Token![,]>()?;
    }
    Ok(ExampleObject {
        span: brace.span.join(),
        fields,
    })
}

fn parse_example_value(input: syn::parse::ParseStream<'_>) -> syn::Result<ExampleLit> {
    use syn::ext::IdentExt;
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = syn::bracketed!(content in input);
        let mut values = Vec::new();
        while !content.is_empty() {
            values.push(parse_example_value(&content)?);
            if content.is_empty() {
                break;
            }
            content.parse::<syn::Token![,]>()?;
        }
        return Ok(ExampleLit {
            kind: ExampleKind::Array(values),
            span: bracket.span.join(),
            written: "[...]".into(),
        });
    }
    if input.peek(syn::token::Brace) {
        let object = parse_example_object(input)?;
        return Ok(ExampleLit {
            span: object.span,
            kind: ExampleKind::Object(object),
            written: "{...}".into(),
        });
    }
    if input.peek(syn::Ident::peek_any) && !input.peek(syn::LitBool) {
        let ident = input.call(syn::Ident::parse_any)?;
        if ident == "null" {
            return Ok(ExampleLit {
                kind: ExampleKind::Null,
                span: ident.span(),
                written: "null".into(),
            });
        }
        let meant = match ident.to_string().as_str() {
            "None" | "nil" | "undefined" => "; write `null`",
            _ => "",
        };
        return Err(syn::Error::new(
            ident.span(),
            format!("`{ident}` is not a value; {EXAMPLE_VALUE}{meant}"),
        ));
    }
    let minus = input.parse::<Option<syn::Token![-]>>()?;
    let literal = input
        .parse::<syn::Lit>()
        .map_err(|error| syn::Error::new(error.span(), EXAMPLE_VALUE))?;
    let span = match &minus {
        Some(minus) => minus.span.join(literal.span()).unwrap_or(literal.span()),
        None => literal.span(),
    };
    let sign = if minus.is_some() { "-" } else { "" };
    let written = format!("{sign}{}", quote::ToTokens::to_token_stream(&literal));
    let kind = match &literal {
        syn::Lit::Str(text) if minus.is_none() => ExampleKind::Str(text.value()),
        syn::Lit::Bool(flag) if minus.is_none() => ExampleKind::Bool(flag.value),
        syn::Lit::Int(number) if number.suffix().is_empty() => ExampleKind::Int(
            format!("{sign}{}", number.base10_digits())
                .parse()
                .map_err(|_| {
                    syn::Error::new(span, "this number is too large for any parameter type")
                })?,
        ),
        syn::Lit::Float(number) if number.suffix().is_empty() => ExampleKind::Float(
            format!("{sign}{}", number.base10_digits())
                .parse()
                .map_err(|_| syn::Error::new(span, "this number does not parse"))?,
        ),
        syn::Lit::Int(_) | syn::Lit::Float(_) => {
            return Err(syn::Error::new(
                span,
                "an input example number has no type suffix, as in JSON; write it without one",
            ));
        }
        _ => return Err(syn::Error::new(span, EXAMPLE_VALUE)),
    };
    Ok(ExampleLit {
        kind,
        span,
        written,
    })
}

/// How one function input is fed by the generated call.
pub(crate) enum Input {
    /// The typed parameters, parsed from the model's arguments.
    Params(Box<syn::Type>),
    /// `&Turn`, the per-call context.
    Turn,
}

/// What the generated code needs to know about the function.
pub(crate) struct Signature {
    pub(crate) inputs: Vec<Input>,
    pub(crate) is_async: bool,
}

/// Reads the signature; every unsupported shape is recorded in `ctxt`.
pub(crate) fn parse_signature(function: &syn::ItemFn, ctxt: &mut Ctxt) -> Option<Signature> {
    let sig = &function.sig;
    let errors_before = ctxt.len();
    if !sig.generics.params.is_empty() {
        ctxt.error_spanned_by(
            &sig.generics,
            "an ability cannot be generic; its descriptors must be fixed at compile time",
        );
    }
    if let Some(constness) = &sig.constness {
        ctxt.error_spanned_by(
            constness,
            "an ability is a plain `fn` or `async fn`, not `const fn`",
        );
    }
    if let Some(variadic) = &sig.variadic {
        ctxt.error_spanned_by(variadic, "an ability cannot be variadic");
    }
    let mut inputs = Vec::new();
    let mut params_seen = false;
    let mut turn_seen = false;
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(receiver) => ctxt.error_spanned_by(
                receiver,
                "`#[ability]` goes on a free function; move the state into the ability or a static",
            ),
            syn::FnArg::Typed(typed) => {
                if is_turn_ref(&typed.ty) {
                    if turn_seen {
                        ctxt.error_spanned_by(&typed.ty, "`&Turn` is taken at most once");
                    }
                    turn_seen = true;
                    inputs.push(Input::Turn);
                } else if let syn::Type::Reference(reference) = &*typed.ty {
                    ctxt.error_spanned_by(
                        reference,
                        "an ability takes its parameters by value (a `#[derive(Params)]` struct) and optionally `&Turn`",
                    );
                } else {
                    if params_seen {
                        ctxt.error_spanned_by(
                            &typed.ty,
                            "an ability takes one `#[derive(Params)]` struct; put every parameter in it",
                        );
                    }
                    params_seen = true;
                    inputs.push(Input::Params(typed.ty.clone()));
                }
            }
        }
    }
    match &sig.output {
        syn::ReturnType::Default => ctxt.push(syn::Error::new(
            sig.paren_token.span.close(),
            "an ability returns `ToolResult`; add `-> ToolResult`",
        )),
        syn::ReturnType::Type(_, ty) => {
            if !is_tool_result(ty) {
                ctxt.error_spanned_by(
                    ty,
                    "an ability returns `ToolResult` (build it with `ToolResult::success` or `ToolResult::error`); the dispatcher renders it for the model",
                );
            }
        }
    }
    (ctxt.len() == errors_before).then_some(Signature {
        inputs,
        is_async: sig.asyncness.is_some(),
    })
}

fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        syn::Type::Group(group) => last_segment(&group.elem),
        syn::Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

fn is_turn_ref(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(reference) if reference.mutability.is_none() => {
            last_segment(&reference.elem).is_some_and(|segment| segment.ident == "Turn")
        }
        _ => false,
    }
}

fn is_tool_result(ty: &syn::Type) -> bool {
    last_segment(ty)
        .is_some_and(|segment| segment.ident == "ToolResult" && segment.arguments.is_empty())
}
