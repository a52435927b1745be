//! Compile-time check of `#[param(clamp)]` against the field's type: a
//! clamp to a bound the type cannot hold would turn a call the author
//! meant to accept into an error, so `#[derive(Params)]` evaluates this
//! as a constant and such a bound is a compile error on the `clamp` key.

use super::default::DefaultRule;
use super::message::ConstMessage;

/// What the macro knows about the clamped field, for the message.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ClampSite {
    /// The field's JSON name.
    pub field: &'static str,
    /// The field's type as written.
    pub ty: &'static str,
}

/// One bound of a clamp, with its text as the model reads it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ClampBound {
    /// The bound's value.
    pub value: f64,
    /// The bound as the schema description prints it.
    pub text: &'static str,
}

/// How every message about a clamp bound begins.
const fn lead(site: ClampSite, bound: ClampBound) -> ConstMessage {
    ConstMessage::new()
        .push("`clamp` on `")
        .push(site.field)
        .push(": ")
        .push(site.ty)
        .push("` would clamp to ")
        .push(bound.text)
        .push(", ")
}

/// Why clamping a field of this type to `bounds` would fail to parse, or
/// `None` when every bound is a value of the type.
#[doc(hidden)]
pub const fn clamp_problem(
    rule: DefaultRule,
    bounds: [Option<ClampBound>; 2],
    site: ClampSite,
) -> Option<ConstMessage> {
    let DefaultRule::Integer { min, max } = rule else {
        return None;
    };
    let mut index = 0;
    while index < bounds.len() {
        if let Some(bound) = bounds[index] {
            // The message is built only when the bound fails: most do not.
            if bound.value as i128 as f64 != bound.value {
                return Some(
                    lead(site, bound)
                        .push("which is not a whole number; give the integer field whole bounds"),
                );
            }
            if bound.value < min as f64 || bound.value > max as f64 {
                return Some(
                    lead(site, bound)
                        .push("outside what `")
                        .push(site.ty)
                        .push("` holds; keep the bounds from ")
                        .push_int(min)
                        .push(" to ")
                        .push_int(max),
                );
            }
        }
        index += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: ClampSite = ClampSite {
        field: "bpm",
        ty: "u8",
    };
    const BYTE: DefaultRule = DefaultRule::Integer { min: 0, max: 255 };

    fn problem(rule: DefaultRule, value: f64, text: &'static str) -> Option<String> {
        clamp_problem(rule, [None, Some(ClampBound { value, text })], SITE)
            .map(|message| message.as_str().to_owned())
    }

    #[test]
    fn a_bound_the_type_holds_passes() {
        assert_eq!(problem(BYTE, 220.0, "220"), None);
        assert_eq!(problem(DefaultRule::Number, 0.5, "0.5"), None);
    }

    #[test]
    fn a_bound_the_type_cannot_hold_says_which_would() {
        assert_eq!(
            problem(BYTE, 300.0, "300").as_deref(),
            Some(
                "`clamp` on `bpm: u8` would clamp to 300, outside what `u8` holds; keep the bounds from 0 to 255"
            )
        );
        assert_eq!(
            problem(BYTE, 2.5, "2.5").as_deref(),
            Some(
                "`clamp` on `bpm: u8` would clamp to 2.5, which is not a whole number; give the integer field whole bounds"
            )
        );
    }
}
