//! The coverage report: every call of every session, the decisions and
//! gates that covered it, what is flagged, and the summary (`--json` prints
//! it as it is).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// Why a call is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Flag {
    /// A result arrived with no decision event for its call before it.
    Bypassed,
    /// A call in a subagent's scope that no decision hook of that subagent
    /// (`subagents/<id>/…`, subscribed to the decision by name) voted on.
    UngatedSubagent,
    /// Decided, but every hook that answered abstained (or none answered).
    AllAbstained,
    /// Its decision event is stored but was never resolved (its deliveries
    /// did not finish).
    Undecided,
}

impl Flag {
    pub(super) const ALL: [Flag; 4] = [
        Flag::Bypassed,
        Flag::UngatedSubagent,
        Flag::AllAbstained,
        Flag::Undecided,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Flag::Bypassed => "bypassed",
            Flag::UngatedSubagent => "ungated_subagent",
            Flag::AllAbstained => "all_abstained",
            Flag::Undecided => "undecided",
        }
    }
}

/// The whole report.
#[derive(Serialize)]
pub(super) struct Report {
    pub journal: PathBuf,
    /// Whether the journal has a `trail` table (component digests).
    pub trail: bool,
    /// Whether its trail holds (`null` without a trail table).
    pub trail_holds: Option<bool>,
    /// What verifying the trail said: what it holds, or where it breaks.
    pub trail_verdict: Option<String>,
    pub sessions: Vec<Session>,
    pub flagged: Vec<Flagged>,
    pub summary: Summary,
}

#[derive(Serialize, Default)]
pub(super) struct Summary {
    pub calls: usize,
    pub flagged: usize,
    pub bypassed: usize,
    pub ungated_subagent: usize,
    pub all_abstained: usize,
    pub undecided: usize,
}

impl Summary {
    /// The count of calls flagged `flag`.
    pub(super) fn count(&self, flag: Flag) -> usize {
        match flag {
            Flag::Bypassed => self.bypassed,
            Flag::UngatedSubagent => self.ungated_subagent,
            Flag::AllAbstained => self.all_abstained,
            Flag::Undecided => self.undecided,
        }
    }

    /// The count of calls flagged `flag`, to add to.
    fn count_mut(&mut self, flag: Flag) -> &mut usize {
        match flag {
            Flag::Bypassed => &mut self.bypassed,
            Flag::UngatedSubagent => &mut self.ungated_subagent,
            Flag::AllAbstained => &mut self.all_abstained,
            Flag::Undecided => &mut self.undecided,
        }
    }
}

#[derive(Serialize)]
pub(super) struct Session {
    pub agent: String,
    pub session: String,
    pub calls: Vec<Call>,
}

#[derive(Serialize)]
pub(super) struct Call {
    /// Null for a permission request that named no call.
    pub call_id: Option<String>,
    pub tool: String,
    /// The subagent whose scope the call is in; null for the primary agent.
    pub subagent: Option<String>,
    /// The final verdict (`allow`, `ask`, `deny`, `abstain`): the last
    /// resolved decision's; null when none was resolved.
    pub verdict: Option<String>,
    pub decided_by: Option<String>,
    pub decisions: Vec<Decision>,
    pub results: Vec<ResultSeen>,
    pub flags: Vec<Flag>,
}

#[derive(Serialize)]
pub(super) struct Decision {
    /// The decision event's id.
    pub event: String,
    pub seq: i64,
    pub kind: String,
    /// `data.bridge` of an event an agent's bridge translated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge: Option<Value>,
    /// Null: the event was never resolved.
    pub verdict: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub decided_by: Option<String>,
    pub failure: bool,
    pub gates: Vec<Gate>,
}

/// One hook's vote on the call.
#[derive(Serialize)]
pub(super) struct Gate {
    pub hook: String,
    /// The subscription the vote came from (`actions.requested`,
    /// `rewrite:actions.requested`, `*`); null for hookrt's own votes.
    pub handler: Option<String>,
    /// Whether it subscribed to the decision by name (a `*` observer's
    /// vote is an abstention it could not help).
    pub decides: bool,
    /// sha256 of the hook's component, from the journal's trail.
    pub component: Option<String>,
    pub answer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Value>,
}

#[derive(Serialize)]
pub(super) struct ResultSeen {
    pub event: String,
    pub seq: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

#[derive(Serialize)]
pub(super) struct Flagged {
    pub agent: String,
    pub session: String,
    pub call_id: Option<String>,
    pub tool: String,
    pub subagent: Option<String>,
    pub flags: Vec<Flag>,
}

impl Call {
    /// What is wrong with this call's coverage. A call without a decision
    /// before its result is `bypassed`; a decided call in a subagent's scope
    /// that no decision hook of that scope voted on is `ungated_subagent`
    /// (whatever decided it: hookrt's own fail-closed `hookrt:unscoped`
    /// refusal, or no one); any other decided call whose every vote
    /// abstained is `all_abstained`.
    pub(super) fn flags(&self) -> Vec<Flag> {
        let mut flags = Vec::new();
        let first_decision = self.decisions.iter().map(|d| d.seq).min();
        if self
            .results
            .iter()
            .any(|r| first_decision.is_none_or(|d| d > r.seq))
        {
            flags.push(Flag::Bypassed);
        }
        if self.decisions.is_empty() {
            return flags;
        }
        let resolved: Vec<&Decision> = self
            .decisions
            .iter()
            .filter(|d| d.verdict.is_some())
            .collect();
        if resolved.is_empty() {
            flags.push(Flag::Undecided);
            return flags;
        }
        let gates = || resolved.iter().flat_map(|d| &d.gates);
        if let Some(id) = &self.subagent {
            let scope = format!("subagents/{id}/");
            if !gates().any(|g| g.decides && g.hook.starts_with(&scope)) {
                flags.push(Flag::UngatedSubagent);
                return flags;
            }
        }
        if gates().all(|g| g.answer == "abstain") {
            flags.push(Flag::AllAbstained);
        }
        flags
    }

    /// Sets the flags and the final verdict from what was gathered.
    pub(super) fn conclude(&mut self) {
        self.flags = self.flags();
        let last = self.decisions.iter().rev().find(|d| d.verdict.is_some());
        self.verdict = last.and_then(|d| d.verdict.clone());
        self.decided_by = last.and_then(|d| d.decided_by.clone());
    }
}

impl Report {
    /// The report of `journal`'s sessions, their calls concluded; the
    /// trail's verdict still unset.
    pub(super) fn new(journal: PathBuf, trail: bool, sessions: Vec<Session>) -> Report {
        let mut report = Report {
            journal,
            trail,
            trail_holds: None,
            trail_verdict: None,
            sessions: Vec::new(),
            flagged: Vec::new(),
            summary: Summary::default(),
        };
        for session in sessions {
            for call in &session.calls {
                report.summary.calls += 1;
                if call.flags.is_empty() {
                    continue;
                }
                report.summary.flagged += 1;
                for flag in &call.flags {
                    *report.summary.count_mut(*flag) += 1;
                }
                report.flagged.push(Flagged {
                    agent: session.agent.clone(),
                    session: session.session.clone(),
                    call_id: call.call_id.clone(),
                    tool: call.tool.clone(),
                    subagent: call.subagent.clone(),
                    flags: call.flags.clone(),
                });
            }
            report.sessions.push(session);
        }
        report
    }
}
