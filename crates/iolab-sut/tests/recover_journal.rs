//! Recovery semantics on journals written by hand (no root needed): newest first,
//! idempotent, failures kept for the next attempt, the journal emptied when all is done.

mod common;

use common::*;
use iolab_sut::{recover_path, Error, Journal, Outcome};

#[test]
fn recover_undoes_newest_first_and_keeps_failures_for_later() {
    let s = Scratch::new("recover");
    let mnt = s.dir.join("iolab-mnt");
    let full = s.dir.join("iolab-full");
    let img = s.dir.join("iolab-x.img");
    std::fs::create_dir(&mnt).unwrap();
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("someone-elses-file"), b"x").unwrap();
    std::fs::write(&img, b"image").unwrap();
    let gone = s.dir.join("iolab-never-created.img");
    let lines = [
        format!(
            r#"{{"seq":1,"pid":7,"time":0,"op":"mkdir","path":"{}"}}"#,
            mnt.display()
        ),
        format!(
            r#"{{"seq":2,"pid":7,"time":0,"op":"mkdir","path":"{}"}}"#,
            full.display()
        ),
        format!(
            r#"{{"seq":3,"pid":7,"time":0,"op":"image","path":"{}"}}"#,
            img.display()
        ),
        format!(
            r#"{{"seq":4,"pid":7,"time":0,"op":"image","path":"{}"}}"#,
            gone.display()
        ),
        r#"{"seq":5,"pid":7,"time":0,"op":"undone","of":4}"#.to_string(),
        format!(
            r#"{{"seq":6,"pid":7,"time":0,"op":"image","path":"{}"}}"#,
            gone.display()
        ),
    ];
    std::fs::write(s.journal(), lines.join("\n") + "\n").unwrap();

    let report = recover_path(&s.journal()).unwrap();
    let order: Vec<u64> = report.actions.iter().map(|a| a.seq).collect();
    assert_eq!(
        order,
        vec![6, 3, 2, 1],
        "newest first; #4 was already undone"
    );
    assert!(matches!(
        report.actions[0].result,
        Ok(Outcome::AlreadyGone(_))
    ));
    assert!(matches!(report.actions[1].result, Ok(Outcome::Undone(_))));
    assert!(matches!(
        report.actions[2].result,
        Err(Error::Conflict { .. })
    ));
    assert!(matches!(report.actions[3].result, Ok(Outcome::Undone(_))));
    assert!(!img.exists() && !mnt.exists());
    assert!(
        full.join("someone-elses-file").exists(),
        "never deletes contents"
    );

    // Only the failure is left; once it can be undone, the journal empties.
    let j = Journal::open(&s.journal()).unwrap();
    let left: Vec<u64> = j.outstanding().map(|r| r.seq).collect();
    assert_eq!(left, vec![2]);
    drop(j);
    std::fs::remove_file(full.join("someone-elses-file")).unwrap();
    let report = recover_path(&s.journal()).unwrap();
    assert_eq!(report.actions.len(), 1);
    assert!(report.is_clean());
    assert_eq!(std::fs::read_to_string(s.journal()).unwrap(), "");
    assert!(recover_path(&s.journal()).unwrap().is_empty());
}

#[test]
fn a_session_recovers_leftovers_when_it_opens() {
    let s = Scratch::new("startup");
    let d = s.dir.join("iolab-left-behind");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(
        s.journal(),
        format!(
            "{{\"seq\":1,\"pid\":7,\"time\":0,\"op\":\"mkdir\",\"path\":\"{}\"}}\n",
            d.display()
        ),
    )
    .unwrap();
    let sut = s.sut();
    let r = sut.startup_recovery().expect("leftovers recovered");
    assert!(r.is_clean() && r.actions.len() == 1);
    assert!(!d.exists());
    drop(sut);
    assert!(s.sut().startup_recovery().is_none());
}

#[test]
fn missing_journal_is_nothing_to_recover() {
    let s = Scratch::new("nojournal");
    let r = recover_path(&s.dir.join("absent.json")).unwrap();
    assert!(r.is_empty());
    assert!(!s.dir.join("absent.json").exists());
}
