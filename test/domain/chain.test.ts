import { type ChainedEvent, canonicalJson, eventHash, genesisHash, verifyChain } from "@waymark/protocol/chain";
import { describe, expect, it } from "vitest";

const WF = "wf_aaaaaaaaaaaaaaaaaaaa";

function chain(count: number): { events: ChainedEvent[]; head: string } {
  const events: ChainedEvent[] = [];
  let previous = genesisHash(WF);
  for (let seq = 1; seq <= count; seq++) {
    const event = {
      seq,
      at: `2026-11-23T00:00:0${seq}.000Z`,
      type: "milestone.logged",
      task_id: "tk_x",
      data: { message: `m${seq}`, n: seq },
    };
    previous = eventHash(previous, event);
    events.push({ ...event, hash: previous });
  }
  return { events, head: previous };
}

describe("canonical JSON", () => {
  it.each([
    [{ b: 1, a: [3, { d: null, c: "x" }] }, '{"a":[3,{"c":"x","d":null}],"b":1}'],
    [{ z: "é\n\u2028", y: undefined }, '{"z":"é\\n\u2028"}'],
    [[undefined, 1.5, -0, true], "[null,1.5,0,true]"],
    ["plain", '"plain"'],
    [{}, "{}"],
    [[[], {}, [undefined]], "[[],{},[null]]"],
    // Members in UTF-16 code unit order (an astral character's surrogates sort before U+FFFD), undefined ones left out.
    [{ "\uFFFD": 1, "😀": 2, a: 3, B: 4, "": 5, é: undefined }, '{"":5,"B":4,"a":3,"😀":2,"\uFFFD":1}'],
    [{ list: [{ b: [1, { d: 2, c: 3 }], a: null }] }, '{"list":[{"a":null,"b":[1,{"c":3,"d":2}]}]}'],
  ])("%j → %s", (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });
});

describe("hash chain verification", () => {
  it("accepts an untouched log and its head", () => {
    const { events, head } = chain(4);
    expect(verifyChain(WF, events, head)).toEqual({ ok: true, events: 4, head });
    expect(verifyChain(WF, [], genesisHash(WF))).toMatchObject({ ok: true, events: 0 });
  });

  it.each([
    ["an altered field", (e: ChainedEvent[]) => ((e[1] as ChainedEvent).data = { message: "edited", n: 2 }), 2, /event 2 .*altered/],
    ["a removed event", (e: ChainedEvent[]) => e.splice(2, 1), 3, /event 3 is missing/],
    ["a reordering", (e: ChainedEvent[]) => e.reverse(), 4, /out of order/],
    ["a removed tail", (e: ChainedEvent[]) => e.pop(), 4, /head does not match/],
    ["a forged hash", (e: ChainedEvent[]) => ((e[0] as ChainedEvent).hash = "0".repeat(64)), 1, /event 1 .*altered/],
  ])("names the event of %s", (_what, tamper, seq, problem) => {
    const { events, head } = chain(4);
    tamper(events);
    const verdict = verifyChain(WF, events, head);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.seq).toBe(seq);
      expect(verdict.problem).toMatch(problem);
    }
  });

  it("binds the chain to its workflow", () => {
    const { events, head } = chain(2);
    expect(verifyChain("wf_bbbbbbbbbbbbbbbbbbbb", events, head).ok).toBe(false);
  });
});
