//! Every linked ability, gathered by linkme at link time.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::ability::{Ability, AbilitySpec, BoxFuture, TurnBinding};
use crate::params::{OpenObject, ParamErrors, ParamType, Params, find_open_object};
use crate::{Channel, ToolResult, Turn};

/// The distributed slice every `#[ability]` adds its entry to.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static ABILITIES: [AbilityEntry];

/// A type-erased ability: its static facts and how to call it.
#[derive(Clone, Copy)]
pub struct AbilityEntry {
    spec: &'static AbilitySpec,
    parameters: fn() -> &'static Value,
    prepare: fn(&Value, TurnBinding<'_>) -> Result<PreparedCall, ParamErrors>,
}

impl std::fmt::Debug for AbilityEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbilityEntry")
            .field("name", &self.spec.name())
            .finish_non_exhaustive()
    }
}

/// A call whose arguments parsed: validated, not yet run.
///
/// The dispatcher parses before the permission gate so a malformed call
/// never reaches an approver, then runs the same parsed value. Private to
/// the crate: running an ability any other way would skip reachability,
/// the gate, the trail and panic catching.
pub(crate) struct PreparedCall {
    /// The ability's future over the parsed parameters, not yet polled:
    /// `#[ability]`'s `call` is one `async move` block, so nothing of the
    /// ability runs until the dispatcher polls it, after the gate.
    pub(crate) future: BoxFuture<'static, ToolResult>,
    /// The qualifier the ability derived from the parsed values, if any
    /// (see [`Ability::permission`]).
    pub(crate) permission: Option<String>,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PreparedCall")
    }
}

// `prepare` is the one function compiled per ability (checking arguments
// goes through it too), so it is written with `match` rather than `?` and
// `map`: each of those would be one more generic function to compile for
// every ability of a crate.
#[allow(clippy::question_mark)] // `?` would be two more generic functions per ability
fn prepare<A: Ability>(
    arguments: &Value,
    turn: TurnBinding<'_>,
) -> Result<PreparedCall, ParamErrors> {
    let params = match <A::Params as ParamType>::parse(arguments, "") {
        Ok(params) => params,
        Err(errors) => return Err(errors),
    };
    // A constant condition: for an ability without a permission function,
    // `A::permission` is never compiled.
    let permission = if A::DERIVES_PERMISSION {
        A::permission(&params)
    } else {
        None
    };
    // The future owns the parameters, so they need no box of their own.
    Ok(PreparedCall {
        future: A::call(params, turn),
        permission,
    })
}

impl AbilityEntry {
    /// The entry for ability type `A`.
    pub const fn of<A: Ability>() -> Self {
        Self {
            spec: A::SPEC,
            // The schema itself: `Ability::parameters` only forwards to it.
            parameters: <A::Params as Params>::schema,
            prepare: prepare::<A>,
        }
    }

    /// The ability's static facts.
    pub const fn spec(&self) -> &'static AbilitySpec {
        self.spec
    }

    /// The ability's name.
    pub const fn name(&self) -> &'static str {
        self.spec.name()
    }

    /// The parameters' JSON Schema.
    pub fn parameters(&self) -> &'static Value {
        (self.parameters)()
    }

    /// Parses the model's arguments (framework fields already removed) into
    /// a call ready to run with the turn `turn` binds to the call (built
    /// only for an ability that takes it), or every problem with them.
    pub(crate) fn prepare(
        &self,
        arguments: &Value,
        turn: TurnBinding<'_>,
    ) -> Result<PreparedCall, ParamErrors> {
        (self.prepare)(arguments, turn)
    }

    /// Checks the model's arguments (framework fields already removed)
    /// against the typed parameters without running anything: every
    /// problem, as the dispatcher would report it. To run the ability, go
    /// through a [`Dispatcher`](crate::Dispatcher).
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), ParamErrors> {
        // The same parse as a call's, through `prepare`, so no second
        // function is compiled per ability: the prepared future is dropped
        // unpolled, so the body never runs (an `#[ability(permission)]`
        // function, which reads the parsed parameters, does).
        let turn = || Turn::builder(Channel::Chat).build();
        match self.prepare(arguments, TurnBinding::new(&turn)) {
            Ok(_) => Ok(()),
            Err(errors) => Err(errors),
        }
    }
}

/// A set of abilities with unique names, sorted by name.
#[derive(Debug, Clone)]
pub struct Registry {
    entries: Vec<AbilityEntry>,
    // Looked up on every call: a fast hasher, the names are our own.
    by_name: HashMap<&'static str, usize, foldhash::fast::RandomState>,
}

/// A copy, for [`Dispatcher::builder`](crate::Dispatcher::builder) over a
/// borrowed registry such as the linked one.
impl From<&Registry> for Registry {
    fn from(registry: &Registry) -> Self {
        registry.clone()
    }
}

/// Why a registry could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegistryError {
    /// Two abilities share a name; the model could not tell them apart.
    #[error(
        "two abilities are named `{name}`: one in {first}, one in {second}; rename one with `#[ability(name = \"...\")]`"
    )]
    DuplicateName {
        /// The shared name.
        name: &'static str,
        /// Where the first definition is.
        first: crate::ability::Location,
        /// Where the second definition is.
        second: crate::ability::Location,
    },
    /// An ability's parameters hold an object without properties: some
    /// providers reject the tool, the rest let the model invent fields.
    /// `#[derive(Params)]` refuses what its tokens show (`Value`,
    /// `HashMap`); this is what only the built schema shows (a
    /// `Schemars<T>` holding a map, a struct that contains itself).
    #[error(
        "ability `{ability}` (in {location}) cannot be offered to a model: its parameter `{path}` is {what}, an object without properties that some providers reject and the model fills with invented fields; {fix}",
        path = .open.path,
        what = .open.shape.what(),
        fix = .open.shape.fix(),
    )]
    OpenObject {
        /// The ability.
        ability: &'static str,
        /// Where it is defined.
        location: crate::ability::Location,
        /// The open object: its path in the parameters and what it is.
        open: OpenObject,
    },
}

impl Registry {
    /// A registry over chosen entries, rejecting duplicate names and
    /// parameters that hold an object without properties (see
    /// [`RegistryError::OpenObject`]).
    pub fn from_entries(
        entries: impl IntoIterator<Item = AbilityEntry>,
    ) -> Result<Self, RegistryError> {
        let mut entries: Vec<AbilityEntry> = entries.into_iter().collect();
        entries.sort_by(|a, b| {
            a.name().cmp(b.name()).then(
                a.spec
                    .location()
                    .module_path()
                    .cmp(b.spec.location().module_path()),
            )
        });
        // In name order, so the ability a registry refuses does not depend
        // on the order the linker laid the entries out in.
        for entry in &entries {
            if let Some(open) = find_open_object(entry.parameters()) {
                return Err(RegistryError::OpenObject {
                    ability: entry.name(),
                    location: entry.spec.location(),
                    open,
                });
            }
        }
        let mut by_name = HashMap::with_capacity_and_hasher(
            entries.len(),
            foldhash::fast::RandomState::default(),
        );
        for (index, entry) in entries.iter().enumerate() {
            if let Some(previous) = by_name.insert(entry.name(), index) {
                return Err(RegistryError::DuplicateName {
                    name: entry.name(),
                    first: entries[previous].spec.location(),
                    second: entry.spec.location(),
                });
            }
        }
        Ok(Self { entries, by_name })
    }

    /// The ability called `name`.
    pub fn get(&self, name: &str) -> Option<&AbilityEntry> {
        self.lookup(name).map(|(_, entry)| entry)
    }

    /// The ability called `name` and its position in [`iter`](Self::iter)'s
    /// order: the dispatcher looks a call's name up once and answers the
    /// later questions about it (is it offered?) by that position.
    pub(crate) fn lookup(&self, name: &str) -> Option<(usize, &AbilityEntry)> {
        self.by_name
            .get(name)
            .map(|&index| (index, &self.entries[index]))
    }

    /// Every ability, sorted by name.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &AbilityEntry> + '_ {
        self.entries.iter()
    }

    /// How many abilities there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A registry of the abilities whose names `keep` accepts.
    pub fn filter(&self, mut keep: impl FnMut(&AbilityEntry) -> bool) -> Self {
        let entries: Vec<AbilityEntry> = self
            .entries
            .iter()
            .copied()
            .filter(|entry| keep(entry))
            .collect();
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(index, entry)| (entry.name(), index))
            .collect();
        Self { entries, by_name }
    }
}

/// Every ability linked into this program.
///
/// Built once; fails when two linked abilities share a name, naming both
/// definitions (linkme itself does not reject duplicates), or when an
/// ability's parameters hold an object without properties, naming the
/// ability, the parameter's path and the fix.
///
/// Abilities in a dependency crate are linked only if the program refers
/// to that crate; an otherwise unused crate of abilities is silently left
/// out. Force it in with [`link_abilities!`](crate::link_abilities).
pub fn registry() -> Result<&'static Registry, RegistryError> {
    static REGISTRY: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| Registry::from_entries(ABILITIES.iter().copied()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Forces a crate of abilities into the program, so that [`registry`]
/// sees them even when nothing else in the program names that crate.
///
/// ```
/// // In the binary: one line per crate that only contributes abilities.
/// chalie_core::link_abilities!(chalie_core);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! link_abilities {
    ($($krate:ident),+ $(,)?) => {
        $(
            #[allow(unused_extern_crates)]
            extern crate $krate as _;
        )+
    };
}
