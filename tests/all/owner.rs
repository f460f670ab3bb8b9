//! One journal, one owner: a second service on a journal in use is refused
//! naming the holder's pid; the lock goes with its owner; a journal file cut
//! short is refused with what is wrong, before SQLite reads it.

use std::fs;
use std::path::Path;
use std::time::Duration;

use hookrt::journal::JournalError;
use hookrt::{HookService, StartError};

use crate::common::{TempAgent, load, transcript};
use crate::journal::{run_all, start};

fn witness() -> TempAgent {
    TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs")
}

fn second_start(agent: &Path, db: &Path) -> Result<HookService, StartError> {
    HookService::start_blocking(
        load(agent),
        Some(db),
        Box::new(|_| {}),
        hookrt::ServiceOptions::default(),
    )
}

/// A journal with the transcript delivered, checkpointed into its main file.
fn filled_journal(agent: &TempAgent) -> std::path::PathBuf {
    let db = agent.path().join("journal.db");
    let (service, _) = start(agent.path(), Some(&db));
    run_all(service, &transcript());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    drop(conn);
    db
}

#[test]
fn a_second_service_on_a_journal_in_use_is_refused_naming_the_holder() {
    let agent = witness();
    let db = agent.path().join("journal.db");
    let (first, seen) = start(agent.path(), Some(&db));
    let Err(e) = second_start(agent.path(), &db) else {
        panic!("a second service started on a journal in use");
    };
    let message = e.to_string();
    assert!(
        matches!(&e, StartError::Journal(JournalError::Locked { holder, .. })
            if *holder == format!("pid {}", std::process::id())),
        "{message}"
    );
    assert_eq!(
        message,
        format!(
            "journal {} is in use by another hookrt (pid {}, holding {}.lock); stop it, or give this one another journal",
            db.display(),
            std::process::id(),
            db.display()
        )
    );
    // The refused starter did not disturb the owner.
    run_all(first, &transcript()[..3]);
    assert_eq!(seen.lock().unwrap().len(), 3);
    // Once the owner stopped, the journal can be taken again.
    let again = second_start(agent.path(), &db).expect("the lock left with its owner");
    again.shutdown_blocking(Duration::from_secs(10));
}

#[test]
fn a_journal_truncated_mid_page_is_refused_with_what_is_wrong() {
    let agent = witness();
    let db = filled_journal(&agent);
    let len = fs::metadata(&db).unwrap().len();
    assert_eq!(len % 4096, 0, "a whole journal is whole pages");
    fs::File::options()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len - 1000)
        .unwrap();
    let Err(e) = second_start(agent.path(), &db) else {
        panic!("a truncated journal was opened");
    };
    assert_eq!(
        e.to_string(),
        format!(
            "journal {} is damaged: it is truncated mid-page: {} bytes is not a whole number of 4096-byte pages; restore it from a backup or move it aside",
            db.display(),
            len - 1000
        )
    );
}

#[test]
fn a_journal_missing_whole_pages_is_refused_with_the_page_counts() {
    let agent = witness();
    let db = filled_journal(&agent);
    let pages = fs::metadata(&db).unwrap().len() / 4096;
    assert!(pages >= 3, "the transcript fills several pages: {pages}");
    fs::File::options()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(4096 * 2)
        .unwrap();
    let Err(e) = second_start(agent.path(), &db) else {
        panic!("a truncated journal was opened");
    };
    assert!(
        e.to_string().contains(&format!(
            "is damaged: it is truncated: its header records {pages} pages, the file holds 2;"
        )),
        "{e}"
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_as_it_was() {
    let agent = witness();
    let db = agent.path().join("journal.db");
    let garbage = "not a journal at all, just some text someone left here\n".repeat(10);
    fs::write(&db, &garbage).unwrap();
    let Err(e) = second_start(agent.path(), &db) else {
        panic!("garbage was opened as a journal");
    };
    assert!(
        e.to_string().ends_with(
            "is damaged: it is not a SQLite database; restore it from a backup or move it aside"
        ),
        "{e}"
    );
    assert_eq!(
        fs::read_to_string(&db).unwrap(),
        garbage,
        "nothing was written"
    );
}
