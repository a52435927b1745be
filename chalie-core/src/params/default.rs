//! Compile-time checks of `#[param(default = …)]`. A default the field's
//! type cannot parse would make every call that leaves the field out fail,
//! so `#[derive(Params)]` evaluates these checks as constants and a wrong
//! default is a compile error on its literal.

use super::message::ConstMessage;

/// Which literal defaults a parameter type accepts; see
/// [`ParamType::DEFAULT_RULE`](super::ParamType::DEFAULT_RULE).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum DefaultRule {
    /// Not checked at compile time (the value is parsed by serde, e.g.
    /// `Schemars<T>`); a wrong default still fails every call at run time.
    Unchecked,
    /// Any string.
    String,
    /// `true` or `false`.
    Bool,
    /// A whole number in `min..=max`.
    Integer {
        /// The smallest value the type holds.
        min: i128,
        /// The largest value the type holds.
        max: i128,
    },
    /// Any number.
    Number,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// No literal: the type is an array or an object (named here).
    NoLiteral(&'static str),
}

/// A `#[param(default = …)]` literal as the macro read it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum DefaultLiteral {
    /// A string literal's value.
    Str(&'static str),
    /// An integer literal, sign included.
    Int(i128),
    /// A float literal, sign included.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

impl DefaultLiteral {
    /// The JSON value the literal stands for: what the schema shows and
    /// what a call that leaves the field out parses.
    pub(crate) fn to_value(self) -> serde_json::Value {
        match self {
            Self::Str(text) => text.into(),
            Self::Int(number) => match (i64::try_from(number), u64::try_from(number)) {
                (Ok(number), _) => number.into(),
                (_, Ok(number)) => number.into(),
                // Beyond any integer type a field can have; the
                // compile-time check rejects it for integer fields.
                _ => (number as f64).into(),
            },
            Self::Float(number) => number.into(),
            Self::Bool(flag) => flag.into(),
        }
    }
}

/// What the macro knows about the field, for the message.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct DefaultSite {
    /// The field's JSON name.
    pub field: &'static str,
    /// The field's type as written.
    pub ty: &'static str,
    /// The literal as written, quotes included.
    pub written: &'static str,
}

/// How every message about a default begins.
const fn lead(site: DefaultSite) -> ConstMessage {
    ConstMessage::new()
        .push("default `")
        .push(site.written)
        .push("` does not fit `")
        .push(site.field)
        .push(": ")
        .push(site.ty)
        .push("`; ")
}

/// Why `literal` does not fit `rule`, or `None` when it does. Runs during
/// constant evaluation, so it builds its message without allocating.
#[doc(hidden)]
pub const fn default_problem(
    rule: DefaultRule,
    literal: DefaultLiteral,
    site: DefaultSite,
) -> Option<ConstMessage> {
    // The message is built only on the failing arms: every default of
    // every Params struct is checked while its crate compiles, and most fit.
    if literal_fits(rule, literal) {
        return None;
    }
    Some(match rule {
        DefaultRule::NoLiteral(kind) => ConstMessage::new()
            .push("`")
            .push(site.field)
            .push(": ")
            .push(site.ty)
            .push("` is ")
            .push(kind)
            .push(", and a default is a string, number or boolean literal; drop the default"),
        _ => push_fix(lead(site), rule, site.written, "default = "),
    })
}

/// Whether a type with `rule` parses `literal`: the one rule of which
/// literals fit which types, shared by defaults and input examples.
pub(crate) const fn literal_fits(rule: DefaultRule, literal: DefaultLiteral) -> bool {
    match (rule, literal) {
        (DefaultRule::Unchecked, _)
        | (DefaultRule::String, DefaultLiteral::Str(_))
        | (DefaultRule::Bool, DefaultLiteral::Bool(_))
        | (DefaultRule::Number, DefaultLiteral::Int(_) | DefaultLiteral::Float(_)) => true,
        (DefaultRule::Integer { min, max }, DefaultLiteral::Int(value)) => {
            value >= min && value <= max
        }
        // The parser accepts a whole float (`3.0`) for an integer.
        (DefaultRule::Integer { min, max }, DefaultLiteral::Float(value)) => {
            value as i128 as f64 == value && value >= min as f64 && value <= max as f64
        }
        (DefaultRule::OneOf(values), DefaultLiteral::Str(text)) => contains(values, text),
        _ => false,
    }
}

/// `message` followed by what to write instead of a literal that does not
/// fit `rule`; `key` is how the value is introduced where it is written
/// (`default = ` or `"field": `), for the string example.
pub(crate) const fn push_fix(
    message: ConstMessage,
    rule: DefaultRule,
    written: &str,
    key: &str,
) -> ConstMessage {
    match rule {
        DefaultRule::String => message
            .push("write a string literal, e.g. `")
            .push(key)
            .push("\"")
            .push(written)
            .push("\"`"),
        DefaultRule::Bool => message.push("write `true` or `false`"),
        DefaultRule::Number => message.push("write a number literal"),
        DefaultRule::Integer { min, max } => message
            .push("write a whole number from ")
            .push_int(min)
            .push(" to ")
            .push_int(max),
        DefaultRule::OneOf(values) => {
            let mut message = message.push("write one of ");
            let mut index = 0;
            while index < values.len() {
                if index > 0 {
                    message = message.push(", ");
                }
                message = message.push("`\"").push(values[index]).push("\"`");
                index += 1;
            }
            message
        }
        DefaultRule::NoLiteral(kind) => message.push("write ").push(kind),
        DefaultRule::Unchecked => message.push("write a value the field's type parses"),
    }
}

const fn contains(values: &[&str], text: &str) -> bool {
    let mut index = 0;
    while index < values.len() {
        if super::str_eq(values[index], text) {
            return true;
        }
        index += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::message::CAPACITY;

    const SITE: DefaultSite = DefaultSite {
        field: "count",
        ty: "u8",
        written: "\"many\"",
    };

    fn problem(rule: DefaultRule, literal: DefaultLiteral) -> Option<String> {
        default_problem(rule, literal, SITE).map(|message| message.as_str().to_owned())
    }

    #[test]
    fn a_default_the_type_parses_passes() {
        let byte = DefaultRule::Integer { min: 0, max: 255 };
        assert_eq!(problem(byte, DefaultLiteral::Int(255)), None);
        assert_eq!(problem(byte, DefaultLiteral::Float(3.0)), None);
        assert_eq!(
            problem(
                DefaultRule::OneOf(&["fast", "slow"]),
                DefaultLiteral::Str("slow")
            ),
            None
        );
        assert_eq!(problem(DefaultRule::Number, DefaultLiteral::Int(-3)), None);
        assert_eq!(
            problem(DefaultRule::Unchecked, DefaultLiteral::Bool(true)),
            None
        );
    }

    #[test]
    fn a_wrong_default_says_what_fits() {
        let byte = DefaultRule::Integer { min: 0, max: 255 };
        assert_eq!(
            problem(byte, DefaultLiteral::Str("many")).as_deref(),
            Some("default `\"many\"` does not fit `count: u8`; write a whole number from 0 to 255")
        );
        assert!(problem(byte, DefaultLiteral::Int(256)).is_some());
        assert!(problem(byte, DefaultLiteral::Int(-1)).is_some());
        assert!(problem(byte, DefaultLiteral::Float(2.5)).is_some());
        assert_eq!(
            problem(
                DefaultRule::OneOf(&["fast", "slow"]),
                DefaultLiteral::Str("many")
            )
            .as_deref(),
            Some(
                "default `\"many\"` does not fit `count: u8`; write one of `\"fast\"`, `\"slow\"`"
            )
        );
        let wide = DefaultRule::Integer {
            min: i128::from(i64::MIN),
            max: i128::from(u64::MAX),
        };
        assert!(
            problem(wide, DefaultLiteral::Bool(true)).is_some_and(
                |text| text.ends_with("from -9223372036854775808 to 18446744073709551615")
            )
        );
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let values: &'static [&'static str] = Box::leak(vec!["é"; 800].into_boxed_slice());
        let text = problem(DefaultRule::OneOf(values), DefaultLiteral::Int(1)).unwrap_or_default();
        assert!(
            text.len() <= CAPACITY && text.len() > CAPACITY - 4,
            "{}",
            text.len()
        );
    }
}
