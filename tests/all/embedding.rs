//! What an embedder does, from `docs/embedding.md`: one import path, events
//! built in code, typed problems, and async load / start / shutdown.

use std::time::Duration;

use hookrt::{
    Coordinates, Envelope, EnvelopeError, EventClass, HookService, Observation, ProblemKind,
    Runtime, ServiceOptions, class_of,
};

use crate::common::{example, opts};

#[test]
fn an_envelope_built_in_code_is_stamped_keyed_and_first_attempt() {
    let at = Coordinates::new("agent-1", "sess-1", 7).in_turn("turn-1");
    let e = Envelope::new(
        "evt-1",
        "message.completed",
        at.clone(),
        serde_json::json!({}),
    )
    .expect("a valid event");
    assert_eq!(e.attempt, 1);
    assert_eq!(e.schema_version, hookrt::event::SCHEMA_VERSION);
    assert_eq!(
        e.idempotency_key,
        hookrt::event::idempotency_key("message.completed", &at)
    );
    assert!(matches!(
        Envelope::new("evt-2", "message.complete", at, serde_json::json!({})),
        Err(EnvelopeError::UnknownKind(_))
    ));
}

#[test]
fn a_parsed_envelope_changed_in_code_is_rekeyed_not_refused() {
    let rt = crate::common::load(&example("agent"));
    let mut e = crate::common::transcript().remove(0);
    let before = e.idempotency_key.clone();
    e.coordinates.sequence += 1000;
    e.id = "evt-moved".into();
    let report = rt
        .dispatch(&e)
        .expect("a changed envelope is still deliverable");
    assert!(!report.deliveries.is_empty());
    e.validate().expect("validate re-derives the key");
    assert_ne!(e.idempotency_key, before);
    assert_eq!(
        e.idempotency_key,
        hookrt::event::idempotency_key(&e.kind, &e.coordinates)
    );
}

#[test]
fn a_supplied_key_that_differs_is_still_refused_at_the_input() {
    let mut line: serde_json::Value =
        serde_json::to_value(crate::common::transcript().remove(0)).unwrap();
    line["idempotency_key"] = "forged".into();
    assert!(matches!(
        Envelope::from_json(&line.to_string()),
        Err(EnvelopeError::IdempotencyKey { .. })
    ));
}

#[test]
fn a_missing_agent_folder_is_reported_as_such() {
    let missing = std::env::temp_dir().join("hookrt-no-such-agent-folder");
    let problems = match Runtime::load_blocking(&missing, &opts(), &mut |_| {}) {
        Ok(_) => panic!("a missing folder must not load"),
        Err(p) => p,
    };
    assert_eq!(problems.0.len(), 1);
    assert_eq!(problems.0[0].kind, ProblemKind::AgentFolder);
    assert_eq!(problems.0[0].message, "the agent folder does not exist");
    assert!(problems.has(ProblemKind::AgentFolder));
}

#[test]
fn class_of_tells_emit_from_resolve() {
    assert_eq!(class_of("message.completed"), EventClass::Observe);
    assert_eq!(class_of("actions.requested"), EventClass::Decision);
    assert_eq!(class_of("step.completed"), EventClass::Edit);
}

#[test]
fn async_load_start_emit_and_shutdown_on_one_thread() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stats = rt.block_on(async {
        let runtime = Runtime::load(example("agent"), opts())
            .await
            .expect("loads");
        let delivered = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = delivered.clone();
        let observer = Box::new(move |o: Observation<'_>| {
            if let Observation::Delivery(_) = o {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let service = HookService::start(runtime, None, observer, ServiceOptions::default())
            .await
            .expect("starts");
        for e in crate::common::transcript() {
            if class_of(&e.kind) == EventClass::Observe {
                service.emit(e).await.expect("taken");
            } else {
                service.resolve(e).await.expect("resolved");
            }
        }
        service.flush().await;
        let n = delivered.load(std::sync::atomic::Ordering::Relaxed);
        let stats = service.shutdown(Duration::from_secs(10)).await;
        assert_eq!(stats.deliveries, n);
        stats
    });
    assert_eq!(stats.events, crate::common::transcript().len() as u64);
    assert_eq!(stats.left_unacked, 0);
}

#[test]
fn submit_inside_an_async_runtime_refuses_past_the_queue_bound() {
    // One hook that burns its whole 100 ms deadline on every event: the
    // dispatcher falls behind at once, the writer fills the dispatch queue,
    // and the submit queue fills behind it.
    let agent = crate::common::TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "infinite_loop.rs")
        .config("[defaults]\ndeadline_ms = 100\nfuel = 10_000_000_000\n");
    let runtime = crate::common::load(agent.path());
    // Events that finish while the loop submits free their places: they
    // are counted, so the bound below does not depend on how fast this
    // machine submits.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = done.clone();
    let service = HookService::start_blocking(
        runtime,
        None,
        Box::new(move |o| {
            if let hookrt::Observation::Delivery(_) = o {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }),
        hookrt::ServiceOptions::default(),
    )
    .expect("starts");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let template = crate::common::transcript()
        .into_iter()
        .find(|e| e.kind == "message.completed")
        .unwrap();
    let (mut queued, mut refused) = (0usize, 0usize);
    rt.block_on(async {
        for i in 0..20_000u64 {
            let mut e = template.clone();
            e.id = format!("evt-{i}");
            e.coordinates.sequence = i;
            match service.submit(e).refused() {
                None => queued += 1,
                Some(hookrt::EmitError::Overloaded(id)) => {
                    assert_eq!(*id, format!("evt-{i}"));
                    refused += 1;
                }
                Some(other) => panic!("unexpected: {other:?}"),
            }
        }
    });
    // At most the two queues and what the writer and the dispatcher hold
    // are ever held; the rest is refused, not buffered. An event delivered
    // meanwhile (one hook: one delivery) left its place.
    let finished = done.load(std::sync::atomic::Ordering::SeqCst);
    let bound = hookrt::service::HELD_AT_MOST;
    assert!(
        queued <= bound + finished,
        "{queued} events queued, above the bound {bound} plus the {finished} delivered meanwhile"
    );
    assert_eq!(queued + refused, 20_000);
    service.shutdown_blocking(Duration::from_millis(0));
}

#[test]
fn try_submit_hands_the_event_back_whole_when_the_queue_is_full() {
    // As above: one hook that burns its 100 ms deadline on every event, so
    // the queues fill while the loop submits.
    let agent = crate::common::TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "infinite_loop.rs")
        .config("[defaults]\ndeadline_ms = 100\nfuel = 10_000_000_000\n");
    let service = HookService::start_blocking(
        crate::common::load(agent.path()),
        None,
        Box::new(|_| {}),
        hookrt::ServiceOptions::default(),
    )
    .expect("starts");
    let template = crate::common::transcript()
        .into_iter()
        .find(|e| e.kind == "message.completed")
        .unwrap();
    // An invalid event is refused as invalid, not handed back.
    let mut bad = template.clone();
    bad.id = String::new();
    let refused = service.try_submit(bad).expect("not handed back");
    assert!(matches!(
        refused.refused(),
        Some(hookrt::EmitError::Invalid(_))
    ));
    let mut pending = Vec::new();
    let mut back = None;
    for i in 0..20_000u64 {
        let mut e = template.clone();
        e.id = format!("evt-{i}");
        e.coordinates.sequence = i;
        match service.try_submit(e) {
            Ok(p) => {
                assert!(p.refused().is_none(), "{:?}", p.refused());
                pending.push(p);
            }
            Err(e) => {
                back = Some((i, e));
                break;
            }
        }
    }
    let (i, back) = back.expect("20,000 events were queued: the queue bound did not hold");
    // The same event, whole, and only once the submit queue was full.
    assert_eq!(back.id, format!("evt-{i}"));
    assert_eq!(back.coordinates.sequence, i);
    assert_eq!(back.data, template.data);
    assert!(
        pending.len() >= hookrt::service::SUBMIT_QUEUE,
        "handed back after only {} were queued",
        pending.len()
    );
    service.shutdown_blocking(Duration::from_millis(0));
}

#[test]
fn the_service_can_be_shared_behind_an_arc_by_tasks() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<HookService>();
    shareable::<Runtime>();
}
