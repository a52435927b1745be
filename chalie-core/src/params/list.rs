//! The fields of a `#[derive(Params)]` struct read as one list: the
//! struct's generated `parse` names its fields' types once, and the code
//! that reads them is chalie-core's, generic over those types alone.

use serde_json::Value;

use super::error::ParamErrors;
use super::reader::ObjectReader;
use super::{DefaultLiteral, FieldKind, FieldSpec, ParamType};

/// What the generated code takes of a field's type, as one constant
/// ([`ParamType::FIELD`]): its kind, for the field table, and its reader,
/// for the list of fields the struct's parse reads.
#[doc(hidden)]
pub struct FieldOps<T> {
    /// The type's schema and optionality, for its [`FieldSpec`].
    pub kind: FieldKind,
    /// Its reader, shared by every field of the type: as a value, so that
    /// reading a list of them asks nothing of their types, and a type
    /// without a schema is one error, where its `FIELD` is named.
    read: fn(&mut ObjectReader<'_>, usize, &[FieldSpec]) -> Option<T>,
}

impl<T: ParamType> FieldOps<T> {
    /// The operations of `T`, shared by every field of that type.
    pub(crate) const OF: Self = Self {
        kind: FieldKind {
            schema: T::schema,
            optional: T::OPTIONAL,
            accepts: accepts::<T>,
            rule: T::DEFAULT_RULE,
        },
        read: read_field::<T>,
    };
}

/// The fields of a `#[derive(Params)]` struct as one value, a list
/// `(A, (B, (C, ())))` of their [`FieldOps`] in the order of its field
/// table, which the generated `parse` hands to [`parse_object`]. Every
/// struct's fields are then read by these two impls, generic over the
/// field types alone: a struct adds no reading code of its own to
/// type-check, and structs with the same field types share one copy.
#[doc(hidden)]
pub trait FieldList {
    /// The fields' values, as a list of the same shape.
    type Values;

    /// Reads the fields `rest` (the end of `table`), each in turn, going on
    /// past a field with a problem so every problem is recorded; `None` if
    /// any had one.
    fn read_list(
        &self,
        reader: &mut ObjectReader<'_>,
        table: &[FieldSpec],
        rest: &[FieldSpec],
    ) -> Option<Self::Values>;
}

impl FieldList for () {
    type Values = ();

    fn read_list(&self, _: &mut ObjectReader<'_>, _: &[FieldSpec], _: &[FieldSpec]) -> Option<()> {
        Some(())
    }
}

impl<Head, Tail: FieldList> FieldList for (FieldOps<Head>, Tail) {
    type Values = (Head, Tail::Values);

    fn read_list(
        &self,
        reader: &mut ObjectReader<'_>,
        table: &[FieldSpec],
        rest: &[FieldSpec],
    ) -> Option<Self::Values> {
        // A list longer than its table is not what the macro writes; it is
        // reported as an invalid definition, not a panic.
        let (_, after) = rest.split_first()?;
        // `rest` is the end of `table`, so this is the field's place in it.
        let position = table.len().checked_sub(rest.len())?;
        let head = (self.0.read)(reader, position, table);
        let tail = self.1.read_list(reader, table, after);
        Some((head?, tail?))
    }
}

/// Reads the field at `position` in `table`.
fn read_field<T: ParamType>(
    reader: &mut ObjectReader<'_>,
    position: usize,
    table: &[FieldSpec],
) -> Option<T> {
    let field = table.get(position)?;
    if !field.actions.is_empty() && !reader.belongs(field, table) {
        return None;
    }
    let default = || field.default.map(DefaultLiteral::to_value);
    reader.field_or::<T>(Some(position), field.name, default, &field.bounds)
}

/// Parses `value` found at `path` as the object whose fields `table`
/// describes and `fields` lists, into their values; used by
/// `#[derive(Params)]` code. Every problem is reported at once.
#[doc(hidden)]
pub fn parse_object<L: FieldList>(
    value: &Value,
    path: &str,
    table: &[FieldSpec],
    fields: &L,
) -> Result<L::Values, ParamErrors> {
    let mut reader = ObjectReader::open(value, path, table)?;
    match fields.read_list(&mut reader, table, table) {
        Some(list) if reader.is_clean() => Ok(list),
        _ => Err(reader.into_errors()),
    }
}

/// Whether `T` parses `value`: a field type's answer, kept in its
/// [`FieldKind`].
fn accepts<T: ParamType>(value: &Value) -> bool {
    T::parse(value, "").is_ok()
}
