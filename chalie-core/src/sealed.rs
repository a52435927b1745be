//! The seal on the traits only chalie's macros implement ([`Ability`](crate::Ability),
//! [`Params`](crate::Params)): a leaf module, so both traits name it
//! without naming each other.

/// A token only chalie's macros name; see [`Ability`](crate::Ability).
#[doc(hidden)]
#[derive(Debug)]
pub struct MacroOnly(());

/// The one [`MacroOnly`] value, for the generated impls.
#[doc(hidden)]
pub const MACRO_ONLY: MacroOnly = MacroOnly(());
