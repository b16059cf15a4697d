// The scenarios of write-sessions.mjs that only Pi 1.x can write: system messages (the prompt and
// tool loadout, then patches), usage entries, context edits (null and replacement, on both
// branches, before and after a compaction and a retain-none compaction), several roots, a custom
// session id, assistant thinkingLevel. Each session is recorded (with Pi's own view of it) by the
// `record` it is given.

export function scenarios(h) {
  const { create, record, turn, user, asst, call, result, text, usage, prefix } = h;
  const tool = (name) => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: "object", properties: {} },
  });
  const system = (sections, added = [], removed = [], content = "") => ({
    role: "system",
    content,
    sections,
    ...(added.length ? { toolsAdded: added.map(tool) } : {}),
    ...(removed.length ? { toolsRemoved: removed.map((name) => ({ name })) } : {}),
    timestamp: Date.now(),
  });
  const prompt = (cwd) =>
    system(
      {
        preamble: "You are an expert coding assistant. SYSTEM_PREAMBLE_MARKER",
        tools: "<tools>\n- read\n- bash\n- edit\n- write\n</tools>",
        cwd: `Current working directory: ${cwd}`,
      },
      ["read", "bash", "edit", "write"],
    );
  const edit = (sm, target, replacement) =>
    sm.appendContextEdit(target, replacement === null ? null : { content: replacement });

  // h1. Context edits on both branches of one fork: branch `first` is written first, so the other
  // one ends the file (the materialized leaf). Run with each order, every edit is seen from the
  // branch it is on and from the other one.
  function edits(scenario, first) {
    const sm = create("/home/dev/proj");
    const m = {};
    m.S0 = sm.appendMessage(prompt("/home/dev/proj"));
    m.U1 = sm.appendMessage(user("U1: fix the failing parser test"));
    m.A1 = sm.appendMessage(
      asst([text("Running the tests."), call("call_h1", "bash", { command: "pytest -x" })], "toolUse", {
        thinkingLevel: "high",
      }),
    );
    m.R1 = sm.appendMessage(
      result("call_h1", "bash", "FAILED tests/test_parser.py::test_nested OVERFLOW_NOISE_MARKER"),
    );
    m.A2 = sm.appendMessage(asst("A2: the nested case fails in parse_block.", "stop", { thinkingLevel: "high" }));
    m.CM = sm.appendCustomMessageEntry("enriched-prompt", "Project context: Python 3.12, pytest.", true);
    m.U2 = sm.appendMessage(user("U2: use the recursive descent version"));
    m.A3 = sm.appendMessage(asst("A3: rewrote parse_block recursively.", "stop", { thinkingLevel: "medium" }));
    m.usage = sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage).id;
    const branches = {
      a: () => {
        m.a_E1 = edit(sm, m.R1, null); // the noisy tool result leaves the context
        m.a_E2 = edit(sm, m.A1, "Ran the tests (output trimmed)."); // a string: one text block
        m.a_E3 = edit(sm, m.U1, "U1 edited: fix the parser test");
        m.a_E4 = edit(sm, m.CM, null);
        m.a_E5 = edit(sm, m.CM, "Project context: Python 3.12."); // the later one wins: back in
        m.a_E6 = edit(sm, m.A2, "A2 replaced");
        m.a_E7 = edit(sm, m.A2, null); // the later one wins: out
        m.a_S1 = sm.appendMessage(system({ skills: "<skills>none</skills>", cwd: null }, [], ["write"]));
        m.a_U3 = sm.appendMessage(user("U3a: now the tokenizer"));
        m.a_A4 = sm.appendMessage(asst("A4a: tokenizer done"));
      },
      b: () => {
        m.b_E1 = edit(sm, m.R1, [text("FAILED test_nested (shortened)")]);
        m.b_E2 = edit(sm, m.U2, null);
        m.b_E3 = edit(sm, m.A2, "A2 on branch b");
        m.b_U3 = sm.appendMessage(user("U3b: keep the old parser after all"));
        m.b_A4 = sm.appendMessage(asst("A4b: reverted"));
      },
    };
    const second = first === "a" ? "b" : "a";
    branches[first]();
    sm.branch(m.usage);
    branches[second]();
    record(sm.getSessionFile(), scenario, m);
  }
  edits("h1-context-edits-leaf-b", "a");
  edits("h1-context-edits-leaf-a", "b");

  // h2. Edits around a compaction that keeps a range holding a system-message patch: edits in the
  // summarized range change nothing, edits in the kept range and after it do, an edit of a
  // summarized entry changes nothing; the kept system message gives way to the checkpoint.
  {
    const sm = create("/home/dev/proj/server");
    const m = {};
    m.S0 = sm.appendMessage(prompt("/home/dev/proj/server"));
    Object.assign(m, prefix("t1", turn(sm, 1, "parse numbers")));
    m.t2u = sm.appendMessage(user("turn 2: run the number tests"));
    m.t2a = sm.appendMessage(asst([call("call_h2", "bash", { command: "pytest tests/num" })], "toolUse"));
    m.t2r = sm.appendMessage(result("call_h2", "bash", "3 passed"));
    m.E_early = edit(sm, m.t2r, null); // summarized away with its target
    Object.assign(m, prefix("t3", turn(sm, 3, "parse strings"))); // t3u: the first kept entry
    m.S1 = sm.appendMessage(system({ skills: "<skills>parser-skill</skills>" }, ["grep"]));
    m.E_kept = edit(sm, m.t3a, "answer 3: strings parsed (short)"); // kept: applies
    m.E_kept_old = edit(sm, m.t1u, null); // target summarized: nothing
    Object.assign(m, prefix("t4", turn(sm, 4, "parse lists")));
    m.C = sm.appendCompaction("Summary: numbers and strings parse.", m.t3u, 50000, {
      readFiles: ["src/parser.py"],
      modifiedFiles: ["src/parser.py"],
    });
    Object.assign(m, prefix("t5", turn(sm, 5, "parse maps")));
    m.E_after1 = edit(sm, m.t4a, null);
    m.E_after2 = edit(sm, m.t5u, "turn 5: parse maps (edited)");
    m.E_after3 = edit(sm, m.t2u, null); // summarized: nothing
    m.S2 = sm.appendMessage(system({ skills: null }, [], ["grep"]));
    Object.assign(m, prefix("t6", turn(sm, 6, "parse sets")));
    record(sm.getSessionFile(), "h2-edits-after-compaction", m);
  }

  // h3. A retain-none compaction (firstKeptEntryId = its own id): everything before it is
  // summarized, edits from before it included; edits after it apply.
  {
    const sm = create("/home/dev/proj/server");
    const m = {};
    m.S0 = sm.appendMessage(prompt("/home/dev/proj/server"));
    Object.assign(m, prefix("t1", turn(sm, 1, "lexer")));
    Object.assign(m, prefix("t2", turn(sm, 2, "parser")));
    m.E0 = edit(sm, m.t1a, null);
    m.C = sm.appendCompaction("Summary: lexer and parser done.", null, 30000);
    Object.assign(m, prefix("t3", turn(sm, 3, "printer")));
    m.E1 = edit(sm, m.t3a, null);
    m.E2 = edit(sm, m.t3u, [text("turn 3: the printer (edited)")]);
    m.S1 = sm.appendMessage(system({ skills: "<skills>printer</skills>" }));
    Object.assign(m, prefix("t4", turn(sm, 4, "formatter")));
    record(sm.getSessionFile(), "h3-retain-none-compaction", m);
  }

  // h4. Three roots: resetLeaf() starts a second conversation with its own prompt, then
  // branchWithSummary(null, ...) a third; each has an edit, only the last one's is on the path.
  {
    const sm = create("/home/dev/proj/web");
    const m = {};
    m.S0 = sm.appendMessage(prompt("/home/dev/proj/web"));
    Object.assign(m, prefix("t1", turn(sm, 1, "login page")));
    m.E1 = edit(sm, m.t1a, null);
    sm.resetLeaf();
    m.S0b = sm.appendMessage(prompt("/home/dev/proj/web"));
    Object.assign(m, prefix("t2", turn(sm, 2, "signup page")));
    m.E2 = edit(sm, m.t2u, "turn 2: signup page (edited)");
    m.R3 = sm.branchWithSummary(null, "Abandoned: both pages; starting over with a design system.");
    Object.assign(m, prefix("t3", turn(sm, 3, "design system")));
    m.E3 = edit(sm, m.t3u, null);
    Object.assign(m, prefix("t4", turn(sm, 4, "buttons")));
    record(sm.getSessionFile(), "h4-multiple-roots", m);
  }

  // h5. A custom session id, usage, Pi's virtual-model state, model and thinking-level changes.
  {
    const sm = create("/home/dev/proj", { id: "my.refactor_2026" });
    const m = {};
    m.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
    m.thinking = sm.appendThinkingLevelChange("high");
    m.S0 = sm.appendMessage(prompt("/home/dev/proj"));
    m.u1 = sm.appendMessage(user("refactor the config loader"));
    m.a1 = sm.appendMessage(asst("Refactored.", "stop", { thinkingLevel: "high" }));
    m.usage = sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage, "warmed").id;
    m.vms = sm.appendCustomEntry("pi.virtual-model-state", {
      provider: "router",
      modelId: "auto",
      state: { last: "claude-sonnet-4-5" },
    });
    m.name = sm.appendSessionInfo("config refactor");
    record(sm.getSessionFile(), "h5-custom-id", m);
  }
}
