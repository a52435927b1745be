//! Doc comments become the text the model reads.

/// Joins the literal `#[doc = "..."]` lines of `attrs` the way rustdoc shows
/// them: one leading space dropped per line, blank lines kept as paragraph
/// breaks, surrounding blank lines trimmed.
pub(crate) fn collect(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(name_value) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &name_value.value
        else {
            continue;
        };
        for line in text.value().lines() {
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
        }
    }
    unwrap_soft_breaks(&lines).trim().to_owned()
}

/// Joins lines the way Markdown renders them: a single line break inside a
/// paragraph is a space; blank lines, list items and code blocks keep their
/// breaks. The model then reads sentences, not the source's line width.
fn unwrap_soft_breaks(lines: &[String]) -> String {
    let mut text = String::new();
    let mut in_code = false;
    let mut previous_blank = true;
    for line in lines {
        let trimmed = line.trim_start();
        let fence = trimmed.starts_with("```");
        let list_item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed.split_once(". ").is_some_and(|(number, _)| {
                !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
            });
        let hard_break = in_code || fence || list_item || line.is_empty() || previous_blank;
        if !text.is_empty() {
            text.push(if hard_break { '\n' } else { ' ' });
        }
        text.push_str(if hard_break { line } else { trimmed });
        if fence {
            in_code = !in_code;
        }
        previous_blank = line.is_empty() || fence || in_code;
    }
    text
}
