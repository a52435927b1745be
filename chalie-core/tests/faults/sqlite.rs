//! The SQLite store under faults: a file damaged between runs is refused
//! at open with what to do (never a panic, never an empty store); a full
//! database refuses the write that does not fit and keeps everything
//! before it; a second process opening the same file is refused while the
//! first holds it, and let in once the first is killed.

use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use chalie_core::session::{Message, Mode, RecordStore, SessionRecord, SessionStore, SqliteStore};
use serde_json::json;

use crate::report;

/// A store with `sessions` sessions of one message each, closed again.
fn written(path: &Path, sessions: usize) {
    let store = SqliteStore::open(path).unwrap();
    for number in 0..sessions {
        let id = format!("s{number}");
        store
            .put_session(&SessionRecord {
                id: id.clone(),
                mode: Mode::Auto,
                owner: None,
            })
            .unwrap();
        store
            .append_message(&id, "r", &Message::user("x".repeat(500)))
            .unwrap();
    }
}

/// Overwrites `length` bytes at `offset` with a pattern no page holds.
fn scribble(path: &Path, offset: u64, length: usize) {
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(&vec![0xA5; length]).unwrap();
}

/// One way to damage a closed database file.
type Damage = dyn Fn(&Path);

#[test]
fn a_file_damaged_between_runs_is_refused_at_open_with_what_to_do() {
    let folder = tempfile::tempdir().unwrap();
    let damages: [(&str, &Damage); 4] = [
        ("header overwritten", &|path| scribble(path, 0, 100)),
        ("a table page overwritten", &|path| {
            let length = std::fs::metadata(path).unwrap().len();
            scribble(path, length / 2, 4096);
        }),
        ("truncated to half", &|path| {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            let length = file.metadata().unwrap().len();
            file.set_len(length / 2).unwrap();
        }),
        ("replaced by text", &|path| {
            std::fs::write(path, "not a database, just text\n".repeat(200)).unwrap();
        }),
    ];
    let mut refused = 0;
    for (number, (what, damage)) in damages.iter().enumerate() {
        let path = folder.path().join(format!("damaged-{number}.db"));
        written(&path, 200);
        damage(&path);
        match SqliteStore::open(&path) {
            Ok(store) => panic!(
                "{what}: opened as a store holding {:?}",
                store.session("s0")
            ),
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.contains(&path.display().to_string())
                        && message.contains("restore it from a backup"),
                    "{what}: {message}"
                );
                refused += 1;
            }
        }
    }
    report(json!({ "test": "sqlite_damaged", "damages": damages.len(), "refused": refused }));
}

#[test]
fn a_full_database_refuses_the_write_that_does_not_fit_and_keeps_the_rest() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("full.db");
    let store = SqliteStore::open(&path)
        .unwrap()
        .max_size(256 * 1024)
        .unwrap();
    let mut stored = 0;
    let refusal = loop {
        let id = format!("s{stored}");
        let written = store
            .put_session(&SessionRecord {
                id: id.clone(),
                mode: Mode::Plan,
                owner: None,
            })
            .and_then(|()| store.append_message(&id, "r", &Message::user("y".repeat(4000))));
        match written {
            Ok(_) => stored += 1,
            Err(error) => break (id, error.to_string()),
        }
        assert!(stored < 10_000, "the size limit never refused a write");
    };
    assert!(
        refusal.1.contains("full") && refusal.1.contains("retry"),
        "{}",
        refusal.1
    );
    // A user's record refused for the same reason says the same: what was
    // kept, and to free space and retry.
    let owner = chalie_core::turn::Principal::new("alice");
    let mut records = 0;
    let refused = loop {
        match store.insert_record(&owner, "notes", &json!({ "text": "y".repeat(4000) })) {
            Ok(_) => records += 1,
            Err(error) => break error.to_string(),
        }
        assert!(records < 10_000, "the size limit never refused a record");
    };
    assert!(
        refused.contains("full") && refused.contains("retry"),
        "{refused}"
    );
    drop(store);

    // Reopened without the cap: every write before the refusal is whole,
    // and the refused message is not there.
    let reopened = SqliteStore::open(&path).unwrap();
    for number in 0..stored {
        let id = format!("s{number}");
        assert_eq!(reopened.session(&id).unwrap().unwrap().mode, Mode::Plan);
        assert_eq!(reopened.messages(&id).unwrap().len(), 1);
    }
    assert!(reopened.messages(&refusal.0).unwrap().is_empty());
    report(json!({ "test": "sqlite_full", "writes_kept": stored, "writes_refused": 1, "lost": 0 }));
}

/// Not a test of its own: the child process of the next test, which holds
/// the store open until its stdin closes or it is killed.
#[test]
#[ignore = "run as a child process by `a_second_process_is_refused_until_the_first_is_gone`"]
fn child_holding_the_store() {
    let Ok(path) = std::env::var("CHALIE_FAULTS_CHILD_DB") else {
        return;
    };
    let store = SqliteStore::open(&path).unwrap();
    store
        .put_session(&SessionRecord {
            id: "child".into(),
            mode: Mode::Auto,
            owner: None,
        })
        .unwrap();
    println!("holding the store");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

#[test]
fn a_second_process_is_refused_until_the_first_is_gone() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("shared.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "sqlite::child_holding_the_store",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("CHALIE_FAULTS_CHILD_DB", &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|line| line.unwrap().contains("holding the store")),
        "the child never opened the store"
    );

    let refused = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(
        refused.contains("open in another process") && refused.contains("PgStore"),
        "{refused}"
    );
    // Within this process a store may be opened twice (a restart of the
    // sessions); the lock is the process's, so neither is refused.
    let folder_own = tempfile::tempdir().unwrap();
    let own = folder_own.path().join("own.db");
    let first = SqliteStore::open(&own).unwrap();
    let second = SqliteStore::open(&own).unwrap();
    drop((first, second));

    // Killed (SIGKILL), the child's lock goes with it: the file opens, and
    // what the child wrote is there.
    child.kill().unwrap();
    child.wait().unwrap();
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.session("child").unwrap().unwrap().mode, Mode::Auto);
    report(
        json!({ "test": "sqlite_two_processes", "second_open_refused": 1, "opened_after_kill": 1 }),
    );
}
