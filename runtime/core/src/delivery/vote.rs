//! Votes: what one hook's answer (or failure) counts as in its event's
//! merge, by the event's class. A malformed answer is a broken policy and
//! fails closed, with the reason; a `*` handler observes and never decides.

use crate::delivery::decision::{self, Vote};
use crate::delivery::rewrite::RewriteChain;
use crate::event::answer::{Answer, Approval, FileEdit, Gate, Permission};
use crate::event::kind::{self, GateRule};
use crate::hooks::folder::settings::OnFailure;
use crate::sandbox::outcome::Outcome;

/// A checked rewrite: the new input and the top-level keys it changed.
type Rewritten = (serde_json::Value, Vec<String>);

/// A tool-approval hook's vote: one approval per requested call (`n`), and
/// its checked rewrites by call index (`data`: the event's data as rewritten
/// so far, kept when a rewriter is planned). A malformed answer (the wrong
/// number of answers, the wrong kind, a rewrite from a plain subscription or
/// one that is not a JSON object within the bound) is a broken policy: it
/// fails closed whatever `on_failure` says, with the reason, and none of its
/// rewrites apply (a `*` handler observes and never decides).
#[allow(
    clippy::too_many_arguments,
    reason = "one vote's inputs: who answered, how, and the rewrite it may carry"
)]
pub(crate) fn approval_vote(
    slug: &str,
    handler: &str,
    on_failure: OnFailure,
    n: usize,
    outcome: Outcome,
    answer: Answer,
    rewrites: bool,
    data: Option<&serde_json::Value>,
) -> (Vote<Vec<Approval>>, Vec<(usize, Rewritten)>) {
    let malformed = |what: String| {
        let one = if handler == kind::WILDCARD {
            Approval::Abstain
        } else {
            Approval::Deny(format!(
                "policy hook `{slug}` answered {what}; denied because a malformed answer fails closed",
            ))
        };
        (vec![one; n], Some(Outcome::Error))
    };
    let mut rewritten = Vec::new();
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::Approvals(list)) if list.len() == n => (list, None),
        (Outcome::Ok, Answer::Calls(list)) if list.len() == n => {
            let mut problem = None;
            for (i, call) in list.iter().enumerate() {
                let Some(json) = &call.rewrite else { continue };
                if !rewrites {
                    problem = Some(format!(
                        "a rewrite of call #{i} from a plain subscription (subscribe as `{}{}` to rewrite)",
                        kind::REWRITE_PREFIX,
                        kind::handled_kind(handler)
                    ));
                    break;
                }
                let before = data.map_or(&serde_json::Value::Null, |d| &d["actions"][i]["input"]);
                match RewriteChain::check(before, json) {
                    Ok(r) => rewritten.push((i, r)),
                    Err(why) => {
                        problem = Some(format!("{why} for call #{i}"));
                        break;
                    }
                }
            }
            match problem {
                Some(what) => {
                    rewritten.clear();
                    malformed(what)
                }
                None => (list.into_iter().map(|c| c.approval).collect(), None),
            }
        }
        (Outcome::Ok, Answer::None) => (vec![Approval::Abstain; n], None),
        (Outcome::Ok, other) => {
            malformed(format!("{} for {n} requested call(s)", describe(&other)))
        }
        (failed, _) => (
            vec![decision::failure_approval(on_failure, slug, failed); n],
            Some(failed),
        ),
    };
    let vote = Vote {
        hook: slug.to_owned(),
        answer,
        failure,
    };
    (vote, rewritten)
}

/// A gate hook's vote. A malformed answer (not a gate, or a gate the kind
/// does not take) fails closed as a failure would under `on_failure = "deny"`.
pub(crate) fn gate_vote(
    slug: String,
    handler: &str,
    on_failure: OnFailure,
    rule: GateRule,
    outcome: Outcome,
    answer: Answer,
) -> Vote<Gate> {
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::Gate(g))
            if matches!(
                (&g, rule),
                (Gate::Pass, _)
                    | (Gate::Block(_), GateRule::Block)
                    | (Gate::Continue(_), GateRule::Continue)
            ) =>
        {
            (g, None)
        }
        (Outcome::Ok, Answer::None) => (Gate::Pass, None),
        (Outcome::Ok, other) => {
            let on_failure = if handler == kind::WILDCARD {
                OnFailure::Abstain
            } else {
                OnFailure::Deny
            };
            let mut g = decision::failure_gate(on_failure, rule, &slug, Outcome::Error);
            if let Gate::Block(reason) = &mut g {
                *reason = format!(
                    "gate hook `{slug}` answered {} to a gate that takes {}; blocked because a malformed answer fails closed",
                    describe(&other),
                    match rule {
                        GateRule::Block => "pass or block",
                        GateRule::Continue => "pass or continue",
                    }
                );
            }
            (g, Some(Outcome::Error))
        }
        (failed, _) => (
            decision::failure_gate(on_failure, rule, &slug, failed),
            Some(failed),
        ),
    };
    Vote {
        hook: slug,
        answer,
        failure,
    }
}

/// A permission hook's vote and its checked rewrite (`before`: the input as
/// rewritten so far, when a rewriter is planned); malformed answers fail
/// closed as in [`approval_vote`].
pub(crate) fn permission_vote(
    slug: &str,
    handler: &str,
    on_failure: OnFailure,
    outcome: Outcome,
    answer: Answer,
    rewrites: bool,
    before: Option<&serde_json::Value>,
) -> (Vote<Permission>, Option<Rewritten>) {
    let malformed = |what: String| {
        let p = if handler == kind::WILDCARD {
            Permission::Abstain
        } else {
            Permission::Deny {
                message: format!(
                    "permission hook `{slug}` answered {what}; denied because a malformed answer fails closed"
                ),
                interrupt: false,
            }
        };
        (p, Some(Outcome::Error), None)
    };
    let (answer, failure, rewritten) = match (outcome, answer) {
        (
            Outcome::Ok,
            Answer::Permission(Permission::Allow {
                rewrite: Some(json),
            }),
        ) => {
            if !rewrites {
                malformed(format!(
                    "a rewrite from a plain subscription (subscribe as `{}{}` to rewrite)",
                    kind::REWRITE_PREFIX,
                    kind::handled_kind(handler)
                ))
            } else {
                match RewriteChain::check(before.unwrap_or(&serde_json::Value::Null), &json) {
                    Ok(r) => (Permission::Allow { rewrite: None }, None, Some(r)),
                    Err(why) => malformed(why),
                }
            }
        }
        (Outcome::Ok, Answer::Permission(p)) => (p, None, None),
        (Outcome::Ok, Answer::None) => (Permission::Abstain, None, None),
        (Outcome::Ok, other) => malformed(format!("{} to a permission request", describe(&other))),
        (failed, _) => (
            decision::failure_permission(on_failure, slug, failed),
            Some(failed),
            None,
        ),
    };
    let vote = Vote {
        hook: slug.to_owned(),
        answer,
        failure,
    };
    (vote, rewritten)
}

/// A file-edit hook's vote; a malformed answer fails closed as in
/// [`approval_vote`].
pub(crate) fn file_edit_vote(
    slug: String,
    handler: &str,
    on_failure: OnFailure,
    outcome: Outcome,
    answer: Answer,
) -> Vote<FileEdit> {
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::FileEdit(answer)) => (answer, None),
        (Outcome::Ok, Answer::None) => (FileEdit::NotHandled, None),
        (Outcome::Ok, other) => {
            let answer = if handler == kind::WILDCARD {
                FileEdit::NotHandled
            } else {
                FileEdit::Failed(format!(
                    "file-edit hook `{slug}` answered {} to a file edit; the write is aborted because a malformed answer fails closed",
                    describe(&other)
                ))
            };
            (answer, Some(Outcome::Error))
        }
        (failed, _) => (
            decision::failure_file_edit(on_failure, &slug, failed),
            Some(failed),
        ),
    };
    Vote {
        hook: slug,
        answer,
        failure,
    }
}

/// What a handler answered, in words, for the reason of a malformed answer.
fn describe(answer: &Answer) -> String {
    match answer {
        Answer::None => "nothing".to_owned(),
        Answer::Approvals(list) => format!("{} approval(s)", list.len()),
        Answer::Calls(list) => format!("{} call answer(s)", list.len()),
        Answer::FileEdit(_) => "a file-edit answer".to_owned(),
        Answer::Edit(_) => "an edited agent input".to_owned(),
        Answer::Gate(Gate::Pass) => "pass".to_owned(),
        Answer::Gate(Gate::Block(_)) => "block".to_owned(),
        Answer::Gate(Gate::Continue(_)) => "continue".to_owned(),
        Answer::Permission(_) => "a permission answer".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_for_the_wrong_number_of_calls_deny_every_call() {
        // Two calls requested; one answer given, as approvals (worlds
        // 0.1.0-0.2.0) or as call answers (0.3.0).
        let vote = |answer| {
            let on = OnFailure::Abstain;
            approval_vote(
                "guard",
                "actions.requested",
                on,
                2,
                Outcome::Ok,
                answer,
                false,
                None,
            )
        };
        let denied = |what: &str| {
            let why = format!(
                "policy hook `guard` answered {what} for 2 requested call(s); denied because a malformed answer fails closed"
            );
            vec![Approval::Deny(why); 2]
        };
        let (v, rewritten) = vote(Answer::Approvals(vec![Approval::Allow]));
        assert_eq!(v.answer, denied("1 approval(s)"));
        assert_eq!(v.failure, Some(Outcome::Error));
        assert!(rewritten.is_empty());
        let (v, _) = vote(Answer::Calls(vec![crate::event::answer::CallAnswer {
            approval: Approval::Allow,
            rewrite: None,
        }]));
        assert_eq!(v.answer, denied("1 call answer(s)"));
        assert_eq!(v.failure, Some(Outcome::Error));
    }

    #[test]
    fn a_gate_answer_the_kind_does_not_take_blocks_and_a_star_handler_only_passes() {
        let vote = |handler: &str, rule, answer| {
            let v = gate_vote(
                "gate".into(),
                handler,
                OnFailure::Abstain,
                rule,
                Outcome::Ok,
                answer,
            );
            (v.answer, v.failure)
        };
        let keep_going = || Answer::Gate(Gate::Continue("go on".into()));
        // A continue to a prompt, which takes pass or block: blocked.
        let why = "gate hook `gate` answered continue to a gate that takes pass or block; blocked because a malformed answer fails closed";
        assert_eq!(
            vote("prompt.submitted", GateRule::Block, keep_going()),
            (Gate::Block(why.into()), Some(Outcome::Error))
        );
        // The same from a `*` handler observes: it never decides.
        assert_eq!(
            vote(kind::WILDCARD, GateRule::Block, keep_going()),
            (Gate::Pass, Some(Outcome::Error))
        );
        // A block to a turn's stop, which takes pass or continue: the turn
        // is let stop (a failed stop gate keeps nothing going).
        assert_eq!(
            vote(
                "turn.stopping",
                GateRule::Continue,
                Answer::Gate(Gate::Block("no".into()))
            ),
            (Gate::Pass, Some(Outcome::Error))
        );
        // Answers the kind takes count as given.
        assert_eq!(
            vote("turn.stopping", GateRule::Continue, keep_going()),
            (Gate::Continue("go on".into()), None)
        );
        assert_eq!(
            vote(
                "prompt.submitted",
                GateRule::Block,
                Answer::Gate(Gate::Block("no".into()))
            ),
            (Gate::Block("no".into()), None)
        );
    }

    #[test]
    fn a_malformed_permission_answer_denies_and_from_a_star_handler_abstains() {
        let gate = || Answer::Gate(Gate::Pass);
        let (vote, _) = permission_vote(
            "ask",
            "permission.requested",
            OnFailure::Abstain,
            Outcome::Ok,
            gate(),
            false,
            None,
        );
        assert_eq!(
            vote.answer,
            Permission::Deny {
                message: "permission hook `ask` answered pass to a permission request; denied because a malformed answer fails closed".into(),
                interrupt: false,
            }
        );
        let (vote, _) = permission_vote(
            "ask",
            kind::WILDCARD,
            OnFailure::Deny,
            Outcome::Ok,
            gate(),
            false,
            None,
        );
        assert_eq!(
            (vote.answer, vote.failure),
            (Permission::Abstain, Some(Outcome::Error))
        );
    }

    #[test]
    fn a_malformed_file_edit_answer_aborts_the_write_and_from_a_star_handler_does_not() {
        let vote = |handler: &str| {
            let v = file_edit_vote(
                "editor".into(),
                handler,
                OnFailure::Abstain,
                Outcome::Ok,
                Answer::Gate(Gate::Pass),
            );
            (v.answer, v.failure)
        };
        let why = "file-edit hook `editor` answered pass to a file edit; the write is aborted because a malformed answer fails closed";
        assert_eq!(
            vote("file.edit_requested"),
            (FileEdit::Failed(why.into()), Some(Outcome::Error))
        );
        assert_eq!(
            vote(kind::WILDCARD),
            (FileEdit::NotHandled, Some(Outcome::Error))
        );
    }
}
