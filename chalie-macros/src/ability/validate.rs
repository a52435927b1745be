//! The contract every ability meets, one small check per rule. Each check
//! points at the smallest wrong token and says the fix.

use proc_macro2::Span;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use super::parse::{AbilityAttrs, ActionAttr, ExampleKind, ExampleObject, Input, Signature};
use crate::ctxt::Ctxt;
use crate::names::{EXAMPLES_MAX, EXAMPLES_MIN};
use crate::{docs, names};

/// Longest tooltip: it is a label in a list of search results.
const TOOLTIP_MAX: usize = 80;

/// A validated ability, ready to expand; expansion cannot fail.
pub(crate) struct Ability {
    pub(crate) krate: syn::Path,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) summary: String,
    pub(crate) examples: Vec<String>,
    pub(crate) tooltip: String,
    pub(crate) discoverable: bool,
    pub(crate) internal: bool,
    pub(crate) read_only: bool,
    pub(crate) version: String,
    pub(crate) toolset: String,
    pub(crate) permission: Option<syn::Path>,
    /// `rate_limit`: at most `calls` per `seconds`, per session.
    pub(crate) rate_limit: Option<RateLimit>,
    /// `tags`: the permission tags a dispatcher must be granted.
    pub(crate) tags: Vec<String>,
    pub(crate) actions: Vec<Action>,
    /// `input_examples`: whole example calls, checked against the Params
    /// struct by constants the expansion emits.
    pub(crate) input_examples: Vec<ExampleObject>,
    pub(crate) signature: Signature,
}

/// A validated `rate_limit = "3/hour"`.
pub(crate) struct RateLimit {
    pub(crate) calls: u32,
    pub(crate) seconds: u64,
}

/// One declared action and the parameters it requires.
pub(crate) struct Action {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) required: Vec<(String, Span)>,
}

impl Ability {
    /// The `#[derive(Params)]` type, if the function takes one.
    pub(crate) fn params_type(&self) -> Option<&syn::Type> {
        self.signature.inputs.iter().find_map(|input| match input {
            Input::Params(ty) => Some(&**ty),
            Input::Turn => None,
        })
    }
}

/// Runs every check and builds the validated model.
pub(crate) fn validate(
    attrs: AbilityAttrs,
    signature: Signature,
    function: &syn::ItemFn,
    body: &TokenStream,
    ctxt: &mut Ctxt,
) -> Ability {
    let (name, name_span) = match &attrs.name {
        Some(literal) => (literal.value(), literal.span()),
        None => (function.sig.ident.to_string(), function.sig.ident.span()),
    };
    check_name(&name, name_span, attrs.name.is_some(), ctxt);

    let summary = match &attrs.summary {
        Some(literal) => literal.value().trim().to_owned(),
        None => docs::collect(&function.attrs),
    };
    check_summary(&summary, &attrs, function, ctxt);

    let examples = check_examples(&attrs, function, ctxt);

    let tooltip = match &attrs.tooltip {
        Some(literal) => {
            check_tooltip(literal, ctxt);
            literal.value().trim().to_owned()
        }
        None => truncate_chars(&chalie_rules::first_sentence(&summary), TOOLTIP_MAX),
    };

    let version = match &attrs.version {
        Some(literal) => {
            if !names::is_semver(&literal.value()) {
                ctxt.error_spanned_by(
                    literal,
                    format!(
                        "version `{}` is not a semantic version; write `MAJOR.MINOR.PATCH`, e.g. `1.0.0`",
                        literal.value()
                    ),
                );
            }
            literal.value()
        }
        None => "1.0.0".to_owned(),
    };

    let toolset = match &attrs.toolset {
        Some(literal) => {
            if let Some(problem) = names::snake_case_problem("toolset", &literal.value()) {
                ctxt.error_spanned_by(literal, problem);
            }
            literal.value()
        }
        None => "default".to_owned(),
    };

    let actions = check_actions(attrs.actions.as_deref().unwrap_or_default(), ctxt);
    if !actions.is_empty()
        && !signature
            .inputs
            .iter()
            .any(|input| matches!(input, Input::Params(_)))
    {
        ctxt.error_spanned_by(
            &function.sig.ident,
            "an ability with `actions` takes a `#[derive(Params)]` struct with an `action` field",
        );
    }
    check_error_codes(body.clone(), ctxt);
    let rate_limit = attrs
        .rate_limit
        .as_ref()
        .and_then(|literal| check_rate_limit(literal, ctxt));
    let tags = attrs
        .tags
        .as_ref()
        .map(|list| check_tags(list, ctxt))
        .unwrap_or_default();
    let takes_params = signature
        .inputs
        .iter()
        .any(|input| matches!(input, Input::Params(_)));
    let input_examples = match attrs.input_examples {
        Some(input_examples) => check_input_examples(input_examples, takes_params, ctxt),
        None => Vec::new(),
    };

    Ability {
        krate: attrs
            .krate
            .unwrap_or_else(|| syn::parse_quote!(::chalie_core)),
        name,
        name_span,
        summary,
        examples,
        tooltip,
        discoverable: attrs.discoverable.is_none_or(|flag| flag.value),
        internal: attrs.internal.is_some_and(|flag| flag.value),
        read_only: attrs.effect.as_ref().is_some_and(|effect| effect == "read"),
        version,
        toolset,
        permission: attrs.permission,
        rate_limit,
        tags,
        actions,
        input_examples,
        signature,
    }
}

/// An ability that declares input examples gives 1 to 5 of them
/// (`chalie_rules::input_examples_ok`), takes a Params struct for them to
/// be calls of, and names each field of an example object once. What the
/// fields and values must be is checked against the struct when the crate
/// compiles, where its fields are known.
fn check_input_examples(
    input_examples: super::parse::InputExamples,
    takes_params: bool,
    ctxt: &mut Ctxt,
) -> Vec<ExampleObject> {
    use chalie_rules::{INPUT_EXAMPLES_MAX, INPUT_EXAMPLES_MIN};
    let count = input_examples.examples.len();
    if !takes_params {
        ctxt.push(syn::Error::new(
            input_examples.span,
            "`input_examples` are example calls of the ability's parameters, but it takes no `#[derive(Params)]` struct; drop `input_examples`",
        ));
    } else if count < INPUT_EXAMPLES_MIN {
        ctxt.push(syn::Error::new(
            input_examples.span,
            format!(
                "`input_examples` is empty; give {INPUT_EXAMPLES_MIN} to {INPUT_EXAMPLES_MAX} example calls, or drop the key"
            ),
        ));
    } else if !chalie_rules::input_examples_ok(count) {
        let extra = &input_examples.examples[INPUT_EXAMPLES_MAX];
        ctxt.push(syn::Error::new(
            extra.span,
            format!(
                "`input_examples` has {count} examples; give {INPUT_EXAMPLES_MIN} to {INPUT_EXAMPLES_MAX}, each costs tokens on every Anthropic request"
            ),
        ));
    }
    for example in &input_examples.examples {
        check_unique_keys(example, ctxt);
    }
    input_examples.examples
}

/// A field given twice in one example object would be read as the last
/// one; say so at the second.
fn check_unique_keys(object: &ExampleObject, ctxt: &mut Ctxt) {
    let mut seen: Vec<&str> = Vec::new();
    for field in &object.fields {
        if seen.contains(&field.key.as_str()) {
            ctxt.push(syn::Error::new(
                field.key_span,
                format!(
                    "field `{}` is given twice in this input example; give it once",
                    field.key
                ),
            ));
        }
        seen.push(&field.key);
        check_nested_keys(&field.value.kind, ctxt);
    }
}

fn check_nested_keys(kind: &ExampleKind, ctxt: &mut Ctxt) {
    match kind {
        ExampleKind::Object(object) => check_unique_keys(object, ctxt),
        ExampleKind::Array(values) => {
            for value in values {
                check_nested_keys(&value.kind, ctxt);
            }
        }
        _ => {}
    }
}

/// The periods a declared rate limit counts over, in seconds.
const RATE_PERIODS: &[(&str, u64)] = &[
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
];

/// A rate limit reads `CALLS/PERIOD`: a whole number of calls, at least
/// one, per `second`, `minute`, `hour` or `day`.
fn check_rate_limit(literal: &syn::LitStr, ctxt: &mut Ctxt) -> Option<RateLimit> {
    let written = literal.value();
    let periods = RATE_PERIODS
        .iter()
        .map(|(period, _)| format!("`{period}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let Some((calls, period)) = written.split_once('/') else {
        ctxt.error_spanned_by(
            literal,
            format!(
                "rate limit `{written}` is not `CALLS/PERIOD`; write e.g. `rate_limit = \"3/hour\"`, with a period of {periods}"
            ),
        );
        return None;
    };
    let (calls, period) = (calls.trim(), period.trim());
    let calls = match calls.parse::<u32>() {
        Ok(0) => {
            ctxt.error_spanned_by(
                literal,
                "a rate limit of 0 calls allows none; allow at least 1, or remove the ability",
            );
            return None;
        }
        Ok(calls) => calls,
        Err(_) => {
            ctxt.error_spanned_by(
                literal,
                format!(
                    "rate limit `{written}` does not start with a whole number of calls; write e.g. `rate_limit = \"3/hour\"`"
                ),
            );
            return None;
        }
    };
    let singular = period.strip_suffix('s').unwrap_or(period);
    let Some((_, seconds)) = RATE_PERIODS.iter().find(|(name, _)| *name == singular) else {
        let names: Vec<&str> = RATE_PERIODS.iter().map(|(name, _)| *name).collect();
        let meant = names::closest(period, &names)
            .map(|name| format!("did you mean `{name}`? "))
            .unwrap_or_default();
        ctxt.error_spanned_by(
            literal,
            format!("unknown rate-limit period `{period}`; {meant}expected one of {periods}"),
        );
        return None;
    };
    Some(RateLimit {
        calls,
        seconds: *seconds,
    })
}

/// Permission tags are non-empty string literals without spaces, each
/// listed once; a dispatcher must be granted every one to run the ability.
fn check_tags(list: &syn::ExprArray, ctxt: &mut Ctxt) -> Vec<String> {
    if list.elems.is_empty() {
        ctxt.error_spanned_by(
            list,
            "`tags` lists at least one permission tag, e.g. `tags = [\"orders:read\"]`; an ability that needs none takes no `tags`",
        );
    }
    let mut tags: Vec<String> = Vec::new();
    for element in &list.elems {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(literal),
            ..
        }) = element
        else {
            ctxt.error_spanned_by(
                element,
                "a permission tag is a string literal, e.g. `\"orders:read\"`",
            );
            continue;
        };
        let tag = literal.value();
        if tag.is_empty() || tag.chars().any(char::is_whitespace) {
            ctxt.error_spanned_by(
                literal,
                format!(
                    "permission tag `{tag}` is empty or has spaces; write it as one word, e.g. `orders:read`"
                ),
            );
        } else if tags.contains(&tag) {
            ctxt.error_spanned_by(literal, format!("permission tag `{tag}` is listed twice"));
        } else {
            tags.push(tag);
        }
    }
    tags
}

/// Names follow `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, at most 64 characters.
fn check_name(name: &str, span: Span, explicit: bool, ctxt: &mut Ctxt) {
    if let Some(mut problem) = names::snake_case_problem("ability", name) {
        if !explicit {
            problem.push_str(", or set `#[ability(name = \"...\")]`");
        }
        ctxt.push(syn::Error::new(span, problem));
    }
}

/// The summary is what the model reads to choose the tool: never empty.
fn check_summary(summary: &str, attrs: &AbilityAttrs, function: &syn::ItemFn, ctxt: &mut Ctxt) {
    if !summary.is_empty() {
        return;
    }
    match &attrs.summary {
        Some(literal) => ctxt.error_spanned_by(literal, "`summary` is empty; say what the ability does and when to use it"),
        None => ctxt.error_spanned_by(
            &function.sig.ident,
            "ability has no summary; add a `///` doc comment saying what it does and when to use it, or set `summary = \"...\"`",
        ),
    }
}

/// 6 to 8 distinct, non-empty phrases: they drive semantic discovery.
fn check_examples(attrs: &AbilityAttrs, function: &syn::ItemFn, ctxt: &mut Ctxt) -> Vec<String> {
    let Some(examples) = &attrs.examples else {
        ctxt.error_spanned_by(
            &function.sig.ident,
            format!(
                "ability has no `examples`; add {EXAMPLES_MIN} to {EXAMPLES_MAX} phrases a user would say, e.g. `examples = [\"what's the weather in Rome\", ...]`"
            ),
        );
        return Vec::new();
    };
    let count = examples.phrases.len();
    if !chalie_rules::examples_ok(count) {
        ctxt.error_spanned_by(
            &examples.list,
            format!(
                "`examples` has {count} phrase{}; give {EXAMPLES_MIN} to {EXAMPLES_MAX}, they drive semantic discovery",
                if count == 1 { "" } else { "s" }
            ),
        );
    }
    let mut seen = Vec::new();
    for phrase in &examples.phrases {
        let text = phrase.value().trim().to_owned();
        if text.is_empty() {
            ctxt.error_spanned_by(
                phrase,
                "an example phrase is empty; write what a user would say",
            );
        } else if seen.contains(&text.to_lowercase()) {
            ctxt.error_spanned_by(
                phrase,
                "duplicate example phrase; each example should add a new wording",
            );
        }
        seen.push(text.to_lowercase());
    }
    examples
        .phrases
        .iter()
        .map(|phrase| phrase.value().trim().to_owned())
        .collect()
}

/// A tooltip is one short line.
fn check_tooltip(literal: &syn::LitStr, ctxt: &mut Ctxt) {
    let text = literal.value();
    if text.trim().is_empty() {
        ctxt.error_spanned_by(literal, "`tooltip` is empty; give a short label, or leave it out to use the summary's first sentence");
    } else if text.contains('\n') || text.chars().count() > TOOLTIP_MAX {
        ctxt.error_spanned_by(
            literal,
            format!("`tooltip` is one line of at most {TOOLTIP_MAX} characters"),
        );
    }
}

/// Action names follow the ability naming rule (the dot joins them in
/// `tool.action`), are unique, and list each required parameter once.
fn check_actions(actions: &[ActionAttr], ctxt: &mut Ctxt) -> Vec<Action> {
    let mut validated: Vec<Action> = Vec::new();
    for action in actions {
        let name = action.name.to_string();
        if let Some(problem) = names::snake_case_problem("action", &name) {
            ctxt.error_spanned_by(&action.name, problem);
        }
        if validated.iter().any(|earlier| earlier.name == name) {
            ctxt.error_spanned_by(&action.name, format!("duplicate action `{name}`"));
        }
        let mut required: Vec<(String, Span)> = Vec::new();
        for field in &action.required {
            let field_name = field.to_string();
            if field_name == "action" {
                ctxt.error_spanned_by(
                    field,
                    "`action` is always required; list only the other parameters",
                );
            } else if required.iter().any(|(earlier, _)| *earlier == field_name) {
                ctxt.error_spanned_by(field, format!("`{field_name}` is listed twice"));
            }
            required.push((field_name, field.span()));
        }
        validated.push(Action {
            name,
            span: action.name.span(),
            required,
        });
    }
    validated
}

/// A literal error code in the body is kebab-case, so the model and the
/// dispatcher can match on it.
///
/// The body's tokens are scanned, not parsed: a call `…ToolResult::error(`
/// or `…ErrorCode::new(` whose first argument is a string literal. Parsing
/// the whole body would cost every ability's compile in proportion to its
/// body, for this one lint.
fn check_error_codes(body: TokenStream, ctxt: &mut Ctxt) {
    let trees: Vec<TokenTree> = body.into_iter().collect();
    for (index, tree) in trees.iter().enumerate() {
        let TokenTree::Group(group) = tree else {
            continue;
        };
        if group.delimiter() == Delimiter::Parenthesis
            && index >= 4
            && is_error_constructor(&trees[index - 4..index])
        {
            check_code_argument(group.stream(), ctxt);
        }
        check_error_codes(group.stream(), ctxt);
    }
}

/// `Owner::method`, as four tokens, names an error constructor.
fn is_error_constructor(path: &[TokenTree]) -> bool {
    let [
        TokenTree::Ident(owner),
        TokenTree::Punct(first),
        TokenTree::Punct(second),
        TokenTree::Ident(method),
    ] = path
    else {
        return false;
    };
    first.as_char() == ':'
        && first.spacing() == Spacing::Joint
        && second.as_char() == ':'
        && ((owner == "ToolResult" && method == "error")
            || (owner == "ErrorCode" && method == "new"))
}

/// The call's first argument, when it is a string literal alone, must be
/// a kebab-case code.
fn check_code_argument(arguments: TokenStream, ctxt: &mut Ctxt) {
    let mut arguments = arguments.into_iter();
    let Some(TokenTree::Literal(literal)) = arguments.next() else {
        return;
    };
    let alone = match arguments.next() {
        None => true,
        Some(TokenTree::Punct(next)) => next.as_char() == ',',
        Some(_) => false,
    };
    if !alone {
        return;
    }
    let Ok(code) = syn::parse2::<syn::LitStr>(TokenTree::Literal(literal).into()) else {
        return;
    };
    if names::is_kebab_case(&code.value()) {
        return;
    }
    let fix = names::suggest_kebab_case(&code.value())
        .map(|suggestion| format!("; use `{suggestion}`"))
        .unwrap_or_default();
    ctxt.error_spanned_by(
        &code,
        format!(
            "error code `{}` is not kebab-case (`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`){fix}",
            code.value(),
        ),
    );
}

fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}
