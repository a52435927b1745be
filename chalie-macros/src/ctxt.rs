//! An error accumulator, so that one expansion reports every mistake at once.

use std::fmt::Display;

use quote::ToTokens;

/// Collects errors; `check` turns them into one combined `syn::Error`.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records an error spanning the tokens of `node`.
    pub(crate) fn error_spanned_by(&mut self, node: impl ToTokens, message: impl Display) {
        self.errors
            .push(syn::Error::new_spanned(node.into_token_stream(), message));
    }

    /// Records an already built error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// How many errors have been recorded so far.
    pub(crate) fn len(&self) -> usize {
        self.errors.len()
    }

    /// `Ok` when nothing was recorded, else every error combined in order.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
