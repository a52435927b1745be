//! Compile-time check of `#[param(actions = [...])]` against the actions
//! an ability declares. `#[derive(Params)]` does not know the ability, and
//! `#[ability]` does not see the struct's fields, so `#[ability]` evaluates
//! these as constants over both: a field listing an action the ability
//! does not declare, or an action requiring a field that is not its own,
//! is a compile error where the ability is declared.

use super::message::ConstMessage;
use super::{Params, has_field, str_eq};
use crate::{Ability, ActionSpec};

/// The first field of `A`'s parameters that lists an action `A` does not
/// declare, said as a fix; `None` when every listed action is declared.
#[doc(hidden)]
pub const fn field_actions_problem<A: Ability>() -> Option<ConstMessage> {
    let spec = A::SPEC;
    let declared = spec.actions();
    let fields = <A::Params as Params>::FIELD_ACTIONS;
    let mut index = 0;
    while index < fields.len() {
        let (field, actions) = fields[index];
        let mut listed = 0;
        while listed < actions.len() {
            let action = actions[listed];
            if !declares(declared, action) {
                let message = ConstMessage::new()
                    .push("field `")
                    .push(field)
                    .push("` lists action `")
                    .push(action)
                    .push("` in `#[param(actions)]`, but ability `")
                    .push(spec.name());
                return Some(if declared.is_empty() {
                    message
                        .push("` declares no actions; declare them with `actions(")
                        .push(action)
                        .push(" = [])` or drop the field's `actions`")
                } else {
                    let mut message = message.push("` has no such action; its actions are ");
                    let mut each = 0;
                    while each < declared.len() {
                        if each > 0 {
                            message = message.push(", ");
                        }
                        message = message.push("`").push(declared[each].name()).push("`");
                        each += 1;
                    }
                    message.push("; fix the list or declare the action")
                });
            }
            listed += 1;
        }
        index += 1;
    }
    None
}

/// Why `action`, which requires `field`, cannot have it: the field belongs
/// to other actions only. `#[ability]` evaluates it at each name in
/// `actions(action = [field])`.
#[doc(hidden)]
pub const fn required_field_problem<A: Ability>(action: &str, field: &str) -> Option<ConstMessage> {
    let fields = <A::Params as Params>::FIELD_ACTIONS;
    match field_actions(fields, field) {
        Some(actions) if !has_field(actions, action) => Some(
            ConstMessage::new()
                .push("action `")
                .push(action)
                .push("` requires `")
                .push(field)
                .push("`, but the field is only for ")
                .push(if actions.len() == 1 {
                    "action "
                } else {
                    "actions "
                })
                .push_list(actions)
                .push("; add `")
                .push(action)
                .push("` to the field's `actions` or drop the field from this list"),
        ),
        _ => None,
    }
}

/// The actions `field` belongs to, when it belongs to some only.
const fn field_actions(
    fields: &'static [(&'static str, &'static [&'static str])],
    field: &str,
) -> Option<&'static [&'static str]> {
    let mut index = 0;
    while index < fields.len() {
        if str_eq(fields[index].0, field) {
            return Some(fields[index].1);
        }
        index += 1;
    }
    None
}

/// Whether `name` is among the declared actions.
const fn declares(declared: &[ActionSpec], name: &str) -> bool {
    let mut index = 0;
    while index < declared.len() {
        if str_eq(declared[index].name(), name) {
            return true;
        }
        index += 1;
    }
    false
}
