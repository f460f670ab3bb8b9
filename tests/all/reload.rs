//! Hot reload: `HookService::reload` swaps the hooks at one place among the
//! events, so every (event, hook) delivery happens exactly once, by the hooks
//! that ran when the event was taken.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookrt::{Envelope, HookService, Observation, ServiceOptions};

use crate::common::{TempAgent, load, transcript};

/// `n` copies of the transcript's events under fresh ids, tagged `tag`.
fn events(tag: &str, n: usize) -> Vec<Envelope> {
    transcript()
        .into_iter()
        .cycle()
        .take(n)
        .enumerate()
        .map(|(i, mut e)| {
            e.id = format!("{tag}-{i:04}");
            e
        })
        .collect()
}

/// Witness hooks (`*`, always ok) under the given slugs.
fn witnesses(slugs: &[&str]) -> TempAgent {
    slugs.iter().fold(TempAgent::new(), |agent, slug| {
        agent.hook("hostile/hooks/witness.rs", &format!("{slug}.rs"))
    })
}

#[test]
fn a_reload_delivers_each_event_once_by_the_hooks_of_its_side_of_the_swap() {
    let old = witnesses(&["a", "b"]);
    let new = witnesses(&["b", "c"]);
    for (journal, workers) in [(false, 1), (true, 1), (false, 2), (true, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let heard = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
        let sink = heard.clone();
        let observer = Box::new(move |o: Observation<'_>| {
            if let Observation::Delivery(d) = o {
                sink.lock()
                    .unwrap()
                    .push((d.event_id.clone(), d.hook.clone()));
            }
        });
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let case = format!("journal {journal}, {workers} worker(s)");
        let (reloaded, before, racing, after) = tokio.block_on(async {
            let service = Arc::new(
                HookService::start(
                    load(old.path()),
                    journal.then(|| path.clone()),
                    observer,
                    ServiceOptions {
                        threads: workers,
                        ..ServiceOptions::default()
                    },
                )
                .await
                .unwrap(),
            );
            let (before, racing, after) = (
                events("before", 300),
                events("racing", 100),
                events("after", 100),
            );
            // Taken, not yet delivered, when the reload is asked for.
            let mut pending: Vec<_> = before.iter().map(|e| service.submit(e.clone())).collect();
            let reload = tokio::spawn({
                let service = service.clone();
                let runtime = load(new.path());
                async move { service.reload(runtime).await }
            });
            // Sent while the reload is on its way: either side, never both.
            pending.extend(racing.iter().map(|e| service.submit(e.clone())));
            let reloaded = reload.await.unwrap().unwrap();
            pending.extend(after.iter().map(|e| service.submit(e.clone())));
            for p in pending {
                assert!(!p.receipt().await.unwrap().duplicate);
            }
            service.flush().await;
            let service = Arc::into_inner(service).expect("the reload task has ended");
            let stats = service.shutdown(Duration::from_secs(30)).await;
            assert_eq!(stats.left_unacked, 0, "{case}");
            let ids = |es: Vec<Envelope>| es.into_iter().map(|e| e.id).collect::<Vec<_>>();
            (reloaded, ids(before), ids(racing), ids(after))
        });
        assert_eq!(reloaded.previous, ["a", "b"], "{case}");
        assert_eq!(reloaded.hooks, ["b", "c"], "{case}");

        let heard = heard.lock().unwrap().clone();
        let hooks_of = |id: &str| -> Vec<&str> {
            let mut hooks: Vec<&str> = heard
                .iter()
                .filter(|(e, _)| e == id)
                .map(|(_, h)| h.as_str())
                .collect();
            hooks.sort();
            hooks
        };
        for id in &before {
            assert_eq!(
                hooks_of(id),
                ["a", "b"],
                "{case}: {id} was taken before the reload"
            );
        }
        for id in &after {
            assert_eq!(
                hooks_of(id),
                ["b", "c"],
                "{case}: {id} was taken after the reload"
            );
        }
        // The racing events switch sides once, in the order they were sent.
        let sides: Vec<bool> = racing
            .iter()
            .map(|id| match hooks_of(id).as_slice() {
                ["a", "b"] => false,
                ["b", "c"] => true,
                other => panic!("{case}: {id} went to {other:?}, not one whole set"),
            })
            .collect();
        assert!(
            sides.windows(2).all(|w| w[0] <= w[1]),
            "{case}: one switch point, {sides:?}"
        );
        // Nothing else was delivered (no doubles), and the old hooks were done
        // before the new ones began.
        assert_eq!(
            heard.len(),
            2 * (before.len() + racing.len() + after.len()),
            "{case}"
        );
        let last_old = heard.iter().rposition(|(_, h)| h == "a").unwrap();
        let first_new = heard.iter().position(|(_, h)| h == "c").unwrap();
        assert!(last_old < first_new, "{case}");
    }
}
