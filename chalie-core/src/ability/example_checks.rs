//! The checks `#[ability]` runs on its input examples while the crate
//! compiles: a field the `#[derive(Params)]` struct does not have, a value
//! its type does not parse or its bounds refuse, an action the ability
//! does not declare, a field its action does not take, or a required field
//! left out is a compile error at the example's own tokens. Which literals
//! fit which type is the rule defaults follow
//! ([`literal_fits`](crate::params::literal_fits)); it has one home.

use crate::params::{
    ConstMessage, DefaultRule, ExampleValue, FieldSpec, InputExample, Params, has_field,
    literal_fits, push_fix, str_eq,
};
use crate::{Ability, ActionSpec};

/// The parameter fields of `A`, as its Params struct's table.
const fn table<A: Ability>() -> &'static [FieldSpec] {
    <A::Params as Params>::FIELD_TABLE
}

/// The field called `name`.
const fn find(table: &'static [FieldSpec], name: &str) -> Option<&'static FieldSpec> {
    let mut index = 0;
    while index < table.len() {
        if str_eq(table[index].name, name) {
            return Some(&table[index]);
        }
        index += 1;
    }
    None
}

/// The declared action called `name`.
const fn declared_action(
    actions: &'static [ActionSpec],
    name: &str,
) -> Option<&'static ActionSpec> {
    let mut index = 0;
    while index < actions.len() {
        if str_eq(actions[index].name(), name) {
            return Some(&actions[index]);
        }
        index += 1;
    }
    None
}

/// `names`, each in backticks, separated by commas.
const fn push_fields(mut message: ConstMessage, table: &[FieldSpec]) -> ConstMessage {
    let mut index = 0;
    while index < table.len() {
        if index > 0 {
            message = message.push(", ");
        }
        message = message.push("`").push(table[index].name).push("`");
        index += 1;
    }
    message
}

/// The declared actions, each in backticks, separated by commas.
const fn push_actions(mut message: ConstMessage, actions: &[ActionSpec]) -> ConstMessage {
    let mut index = 0;
    while index < actions.len() {
        if index > 0 {
            message = message.push(", ");
        }
        message = message.push("`").push(actions[index].name()).push("`");
        index += 1;
    }
    message
}

/// A bound as a reader would write it: whole numbers without a fraction,
/// others to six decimals at most.
const fn push_number(message: ConstMessage, value: f64) -> ConstMessage {
    if value as i128 as f64 == value {
        return message.push_int(value as i128);
    }
    let message = if value < 0.0 {
        message.push("-")
    } else {
        message
    };
    let magnitude = if value < 0.0 { -value } else { value };
    let mut whole = magnitude as i128;
    let mut millionths = ((magnitude - whole as f64) * 1_000_000.0 + 0.5) as i128;
    if millionths >= 1_000_000 {
        whole += 1;
        millionths -= 1_000_000;
    }
    let mut message = message.push_int(whole);
    if millionths == 0 {
        return message;
    }
    message = message.push(".");
    let mut scale = 100_000;
    while millionths > 0 {
        message = message.push_int(millionths / scale);
        millionths %= scale;
        scale /= 10;
    }
    message
}

/// The input example `index` of `A`, as its spec holds it.
const fn example_of<A: Ability>(index: usize) -> InputExample {
    A::SPEC.input_examples()[index]
}

/// Why the field `key` of `A`'s input example `example` does not belong
/// there: `A`'s parameters have no such field, or the field belongs to
/// other actions than the one the example calls. `#[ability]` evaluates it
/// at the key.
#[doc(hidden)]
pub const fn example_key_problem<A: Ability>(example: usize, key: &str) -> Option<ConstMessage> {
    let spec = A::SPEC;
    let table = table::<A>();
    let Some(field) = find(table, key) else {
        let message = ConstMessage::new()
            .push("input example field `")
            .push(key)
            .push("` is not a parameter of `")
            .push(spec.name());
        return Some(if table.is_empty() {
            message.push("`, which takes none; drop the field")
        } else {
            push_fields(message.push("`; use one of "), table)
        });
    };
    if field.actions.is_empty() {
        return None;
    }
    match example_of::<A>(example).action() {
        // An undeclared action is reported at the action's value instead.
        Some(action)
            if !has_field(field.actions, action)
                && declared_action(spec.actions(), action).is_some() =>
        {
            Some(
                ConstMessage::new()
                    .push("field `")
                    .push(key)
                    .push("` is only for ")
                    .push(if field.actions.len() == 1 {
                        "action "
                    } else {
                        "actions "
                    })
                    .push_list(field.actions)
                    .push(", not `")
                    .push(action)
                    .push("`; drop it from this example or call one of its actions"),
            )
        }
        _ => None,
    }
}

/// Why the value at `position` of `A`'s input example `example` would not
/// parse, or would not be what the field allows: an action the ability
/// does not declare, a value of another type, a number outside the field's
/// `min`/`max`. `written` is the value as written. `#[ability]` evaluates
/// it at the value.
#[doc(hidden)]
pub const fn example_value_problem<A: Ability>(
    example: usize,
    position: usize,
    written: &str,
) -> Option<ConstMessage> {
    let spec = A::SPEC;
    let (key, value) = example_of::<A>(example).fields()[position];
    // A field the struct does not have is reported at its key.
    let Some(field) = find(table::<A>(), key) else {
        return None;
    };
    if str_eq(key, "action")
        && !spec.actions().is_empty()
        && let ExampleValue::Str(action) = value
        && declared_action(spec.actions(), action).is_none()
    {
        let message = ConstMessage::new()
            .push("action `")
            .push(action)
            .push("` is not declared by ability `")
            .push(spec.name())
            .push("`; use one of ");
        return Some(push_actions(message, spec.actions()));
    }
    let rule = field.kind.rule;
    let fits = match value {
        ExampleValue::Null => field.kind.optional,
        ExampleValue::Array(_) => takes_no_literal(rule, "an array"),
        ExampleValue::Object(_) => takes_no_literal(rule, "an object"),
        _ => match value.literal() {
            Some(literal) => literal_fits(rule, literal),
            None => false,
        },
    };
    let lead = ConstMessage::new()
        .push("input example value `")
        .push(written)
        .push("` does not fit field `")
        .push(key)
        .push("`; ");
    if !fits {
        return Some(if matches!(value, ExampleValue::Null) {
            lead.push("the field is not an `Option`, so write a value")
        } else {
            push_fix(lead, rule, written, "")
        });
    }
    let Some(number) = value.number() else {
        return None;
    };
    let below = match field.bounds.min {
        Some(min) => number < min,
        None => false,
    };
    let above = match field.bounds.max {
        Some(max) => number > max,
        None => false,
    };
    if !below && !above {
        return None;
    }
    Some(match (field.bounds.min, field.bounds.max) {
        (Some(min), Some(max)) => push_number(
            push_number(lead.push("write a number from "), min).push(" to "),
            max,
        ),
        (Some(min), None) => push_number(lead.push("write a number of at least "), min),
        (None, Some(max)) => push_number(lead.push("write a number of at most "), max),
        (None, None) => lead,
    })
}

/// Whether a type with `rule` takes a value of `kind` (an array or an
/// object). Its contents are not checked here: the smoke suite parses
/// every input example as a call.
const fn takes_no_literal(rule: DefaultRule, kind: &str) -> bool {
    match rule {
        DefaultRule::Unchecked => true,
        DefaultRule::NoLiteral(taken) => str_eq(taken, kind),
        _ => false,
    }
}

/// Why `A`'s input example `example` is not a whole call: it leaves out a
/// field the call needs (one that is neither an `Option` nor defaulted,
/// and is for the example's action), or a field its action requires.
/// `#[ability]` evaluates it at the example's braces.
#[doc(hidden)]
pub const fn example_missing_problem<A: Ability>(example: usize) -> Option<ConstMessage> {
    let spec = A::SPEC;
    let example = example_of::<A>(example);
    let action = example.action();
    let table = table::<A>();
    let mut index = 0;
    while index < table.len() {
        let field = &table[index];
        let for_action = field.actions.is_empty()
            || match action {
                Some(action) => has_field(field.actions, action),
                None => false,
            };
        if !field.kind.optional
            && field.default.is_none()
            && for_action
            && example.get(field.name).is_none()
        {
            return Some(
                ConstMessage::new()
                    .push("input example leaves out `")
                    .push(field.name)
                    .push("`, which is required; add `\"")
                    .push(field.name)
                    .push("\": ...`"),
            );
        }
        index += 1;
    }
    let Some(name) = action else {
        return None;
    };
    let Some(declared) = declared_action(spec.actions(), name) else {
        return None;
    };
    let required = declared.required();
    let mut index = 0;
    while index < required.len() {
        if example.get(required[index]).is_none() {
            return Some(
                ConstMessage::new()
                    .push("input example of action `")
                    .push(name)
                    .push("` leaves out `")
                    .push(required[index])
                    .push("`, which the action requires; add `\"")
                    .push(required[index])
                    .push("\": ...`"),
            );
        }
        index += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(value: f64) -> String {
        push_number(ConstMessage::new(), value).as_str().to_owned()
    }

    #[test]
    fn bounds_read_as_written() {
        assert_eq!(number(7.0), "7");
        assert_eq!(number(-40.0), "-40");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(-2.25), "-2.25");
        assert_eq!(number(1.9999999), "2");
        assert_eq!(number(0.000001), "0.000001");
    }
}
