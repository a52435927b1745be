//! The store contract and the schema's versions, on PostgreSQL.

use chalie_core::session::{PgStore, SessionStore};

use super::{admin, fresh_database};

#[tokio::test(flavor = "multi_thread")]
async fn the_postgres_store_keeps_the_contract_and_survives_reconnecting() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url).unwrap();
    crate::stores::contract(&store);
    drop(store);
    let reopened = PgStore::connect(&url).unwrap();
    assert_eq!(
        reopened.session("s").unwrap().unwrap().mode,
        chalie_core::session::Mode::Auto
    );
    assert_eq!(reopened.messages("s").unwrap().len(), 3);
    assert_eq!(reopened.tool_calls("r1").unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_schema_newer_than_the_code_is_refused_with_its_version() {
    let url = fresh_database().await;
    drop(PgStore::connect(&url).unwrap());
    let name = url.rsplit_once('/').unwrap().1;
    // What a newer release would leave behind.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let newer = PgStore::SCHEMA_VERSION + 1;
    client
        .execute("UPDATE chalie_schema SET version = $1", &[&newer])
        .await
        .unwrap();
    let error = PgStore::connect(&url).unwrap_err().to_string();
    assert!(
        error.contains(&format!("schema is at version {newer}, newer than the")),
        "{error}"
    );
    drop(client);
    admin()
        .await
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn connecting_twice_migrates_once() {
    let url = fresh_database().await;
    let (first, second) = (url.clone(), url.clone());
    let (a, b) = tokio::join!(
        tokio::task::spawn_blocking(move || PgStore::connect(&first).map(drop)),
        tokio::task::spawn_blocking(move || PgStore::connect(&second).map(drop)),
    );
    a.unwrap().unwrap();
    b.unwrap().unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = client
        .query("SELECT version FROM chalie_schema", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), PgStore::SCHEMA_VERSION);
}

#[test]
fn a_bad_url_and_an_unreachable_server_are_clear_errors() {
    let error = PgStore::connect("mysql://nope").unwrap_err().to_string();
    assert!(
        error.starts_with("session store: not a PostgreSQL URL"),
        "{error}"
    );
    // Port 1 on loopback: nothing listens there.
    let error = PgStore::connect("postgres://chalie@127.0.0.1:1/none")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("session store: cannot connect to PostgreSQL"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_postgres_store_keeps_records_apart_and_across_reconnecting() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url).unwrap();
    crate::records::contract(&store);
    drop(store);
    crate::records::contract_left(&PgStore::connect(&url).unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_inserting_one_owner_s_records_at_once_take_distinct_ids() {
    use chalie_core::session::RecordStore;
    use chalie_core::turn::Principal;

    let url = fresh_database().await;
    let stores = [
        PgStore::connect(&url).unwrap(),
        PgStore::connect(&url).unwrap(),
    ];
    let alice = Principal::new("alice");
    let mut ids: Vec<u64> = std::thread::scope(|scope| {
        let inserting: Vec<_> = (0..16)
            .map(|thread| {
                let (store, alice) = (&stores[thread % 2], &alice);
                scope.spawn(move || {
                    (0..4)
                        .map(|n| {
                            store
                                .insert_record(
                                    alice,
                                    "tasks",
                                    &serde_json::json!({ "thread": thread, "n": n }),
                                )
                                .unwrap_or_else(|error| panic!("insert refused: {error}"))
                                .id
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        inserting
            .into_iter()
            .flat_map(|thread| thread.join().unwrap())
            .collect()
    });
    ids.sort_unstable();
    assert_eq!(
        ids,
        (1..=64).collect::<Vec<u64>>(),
        "distinct, without gaps"
    );
}
