//! Each principal's records: the contract every store keeps (memory,
//! SQLite, PostgreSQL in `replicas`), and the records surviving a reopened
//! SQLite file beside the sessions.

use chalie_core::session::{Listing, MemoryStore, RecordStore};
use chalie_core::turn::Principal;
use serde_json::json;

/// What a store must do with two principals' records; leaves Alice's
/// task 1 (`Buy bread`, after an update) and Bob's note 1 live, Alice's
/// task 2 deleted.
pub(crate) fn contract(store: &dyn RecordStore) {
    let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    let milk = store
        .insert_record(&alice, "tasks", &json!({ "title": "Buy milk" }))
        .unwrap();
    let note = store
        .insert_record(&bob, "tasks", &json!({ "title": "Bob's" }))
        .unwrap();
    let gone = store
        .insert_record(&alice, "tasks", &json!({ "title": "Drop me" }))
        .unwrap();
    // Ids are numbered per owner in a collection: Bob's insert in between
    // leaves no gap in Alice's, so she cannot learn that he added one.
    assert_eq!((milk.id, note.id, gone.id), (1, 1, 2));
    assert_eq!(gone.id, milk.id + 1, "Alice's ids have no gap");
    // Another collection counts its own ids.
    let other = store
        .insert_record(&alice, "events", &json!({ "title": "Gym" }))
        .unwrap();
    assert_eq!(other.id, 1);

    // Another principal's record reads as missing, and nothing changes: an
    // id only Alice has (Bob's own id 1 is his note).
    assert_eq!(store.record(&bob, "tasks", gone.id).unwrap(), None);
    assert_eq!(
        store
            .update_record(&bob, "tasks", gone.id, &json!({ "title": "Hijacked" }))
            .unwrap(),
        None
    );
    assert!(!store.delete_record(&bob, "tasks", gone.id).unwrap());
    assert_eq!(
        store
            .record(&alice, "tasks", gone.id)
            .unwrap()
            .unwrap()
            .data,
        json!({ "title": "Drop me" })
    );
    assert_eq!(
        store.record(&bob, "tasks", milk.id).unwrap().unwrap().data,
        json!({ "title": "Bob's" }),
        "Bob's id 1 is his own record, not Alice's"
    );
    assert_eq!(
        store
            .record(&alice, "tasks", milk.id)
            .unwrap()
            .unwrap()
            .data,
        json!({ "title": "Buy milk" })
    );
    // A record in another collection with the same id is another record.
    assert_eq!(store.record(&alice, "events", gone.id).unwrap(), None);

    let updated = store
        .update_record(&alice, "tasks", milk.id, &json!({ "title": "Buy bread" }))
        .unwrap()
        .unwrap();
    assert_eq!(updated.data, json!({ "title": "Buy bread" }));

    // Deleting is soft: hidden from reads and writes, kept for audit.
    assert!(store.delete_record(&alice, "tasks", gone.id).unwrap());
    assert!(!store.delete_record(&alice, "tasks", gone.id).unwrap());
    assert_eq!(store.record(&alice, "tasks", gone.id).unwrap(), None);
    assert_eq!(
        store
            .update_record(&alice, "tasks", gone.id, &json!({}))
            .unwrap(),
        None
    );
    let live: Vec<u64> = store
        .records(&alice, "tasks", Listing::Live)
        .unwrap()
        .iter()
        .map(|record| record.id)
        .collect();
    assert_eq!(live, [1]);
    let all: Vec<(u64, bool)> = store
        .records(&alice, "tasks", Listing::WithDeleted)
        .unwrap()
        .iter()
        .map(|record| (record.id, record.deleted))
        .collect();
    assert_eq!(all, [(1, false), (2, true)]);
    // A deleted id is never issued again.
    let next = store
        .insert_record(&bob, "tasks", &json!({ "title": "Next" }))
        .unwrap();
    assert_eq!(next.id, 2);
    assert!(store.delete_record(&bob, "tasks", next.id).unwrap());
    let scratch = store.insert_record(&alice, "scratch", &json!({})).unwrap();
    assert!(store.delete_record(&alice, "scratch", scratch.id).unwrap());
    assert_eq!(
        store
            .insert_record(&alice, "scratch", &json!({}))
            .unwrap()
            .id,
        scratch.id + 1,
        "the owner's deleted id is not issued again"
    );

    // Ids no store issues read as missing.
    assert_eq!(store.record(&alice, "tasks", 0).unwrap(), None);
    assert_eq!(store.record(&alice, "tasks", u64::MAX).unwrap(), None);

    // A collection name the store could confuse with another is refused.
    let error = store
        .insert_record(&alice, "", &json!({}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("not a collection name"), "{error}");
}

/// What [`contract`] left, read back (e.g. after reopening the database).
pub(crate) fn contract_left(store: &dyn RecordStore) {
    let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    let alice_tasks = store
        .records(&alice, "tasks", Listing::WithDeleted)
        .unwrap();
    assert_eq!(
        alice_tasks
            .iter()
            .map(|record| (
                record.id,
                record.data["title"].as_str().unwrap(),
                record.deleted
            ))
            .collect::<Vec<_>>(),
        [(1, "Buy bread", false), (2, "Drop me", true)]
    );
    let bob_tasks = store.records(&bob, "tasks", Listing::Live).unwrap();
    assert_eq!(bob_tasks.len(), 1);
    assert_eq!(bob_tasks[0].id, 1);
}

#[test]
fn the_memory_store_keeps_records_apart() {
    let store = MemoryStore::new();
    contract(&store);
    contract_left(&store);
}

#[cfg(feature = "sqlite")]
#[test]
fn the_sqlite_store_keeps_records_apart_and_across_a_reopen() {
    use chalie_core::session::{Mode, SessionRecord, SessionStore, SqliteStore};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.db");
    let store = SqliteStore::open(&path).unwrap();
    contract(&store);
    store
        .put_session(&SessionRecord {
            id: "s".into(),
            mode: Mode::Plan,
            owner: Some(Principal::new("alice")),
        })
        .unwrap();
    drop(store);
    // One file holds both: the sessions and the records come back together.
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.session("s").unwrap().unwrap().mode, Mode::Plan);
    contract_left(&reopened);
}
