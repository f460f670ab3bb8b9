//! The acker: the thread that commits the dispatcher's acks and
//! resolutions, one batch at a time, while the next batch is delivered,
//! and only then tells whoever waits for a resolution: an answer given is
//! one the journal holds (a service killed after it cannot have told an
//! agent what a rerun at its restart might decide otherwise).

use std::sync::{Arc, Mutex, mpsc};

use crate::service::journal::{Ack, Journal};
use crate::service::work::{Decided, lock};

/// The thread that commits each batch's acks (and resolutions), so the
/// dispatcher delivers the next batch while the last one's commit waits for
/// the disk. At most one batch waits for it; a flush or a lookup waits until
/// everything before it is committed ([`Acker::sync`]); dropping it commits
/// what is queued and joins the thread. A crash before a commit leaves those
/// deliveries unacked: they run again at the next start (at-least-once).
pub(crate) struct Acker {
    tx: Option<mpsc::SyncSender<AckMsg>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

enum AckMsg {
    Commit(Vec<Ack>, Vec<Decided>),
    Sync(mpsc::Sender<()>),
}

impl Acker {
    /// Starts the thread committing to `journal`.
    pub(crate) fn start(journal: Arc<Mutex<Option<Journal>>>) -> std::io::Result<Acker> {
        let (tx, rx) = mpsc::sync_channel::<AckMsg>(1);
        let thread = std::thread::Builder::new()
            .name("hookrt-ack".into())
            .spawn(move || {
                for msg in rx {
                    match msg {
                        AckMsg::Commit(acks, decided) => {
                            let kept: Vec<(i64, String)> =
                                decided.iter().filter_map(|d| d.kept.clone()).collect();
                            if let Some(j) = lock(&journal).as_mut()
                                && let Err(e) = j.ack(&acks, &kept)
                            {
                                // Unacked deliveries run again after a restart:
                                // at-least-once holds. The waiters still
                                // get what was decided (a gate's answer is
                                // safer told than dropped), and the error
                                // says the journal may lack it.
                                tracing::error!(
                                    "journal ack failed (deliveries will repeat after restart; {} answer(s) told may be missing from the journal): {e}",
                                    decided.len()
                                );
                            }
                            decided.into_iter().for_each(Decided::tell);
                        }
                        AckMsg::Sync(reply) => {
                            let _ = reply.send(());
                        }
                    }
                }
                // The service stops: the trail's head is signed once more.
                if let Some(j) = lock(&journal).as_mut()
                    && let Err(e) = j.checkpoint()
                {
                    tracing::error!("journal: cannot sign the trail's head at shutdown: {e}");
                }
            })?;
        Ok(Acker {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues a batch's acks (waits while the batch before it is queued).
    pub(crate) fn commit(&self, acks: Vec<Ack>, decided: Vec<Decided>) {
        if acks.is_empty() && decided.is_empty() {
            return;
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(AckMsg::Commit(acks, decided));
        }
    }

    /// Returns once every batch queued before it is committed.
    pub(crate) fn sync(&self) {
        let (reply, done) = mpsc::channel();
        if let Some(tx) = &self.tx
            && tx.send(AckMsg::Sync(reply)).is_ok()
        {
            let _ = done.recv();
        }
    }
}

impl Drop for Acker {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
