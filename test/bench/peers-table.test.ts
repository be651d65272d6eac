import { describe, expect, it } from "vitest";
import { cell, renderTable, type RowSpec, type Samples } from "../../bench/peers/table.ts";

const row: RowSpec = { label: "W1 appends", unit: "ms", metric: "ms", jobs: { raw: "W1", pi: "W1", omp: "W1", us: "W1", "raw-bun": "W1" } };

describe("bench:peers table", () => {
  it("prints each column's median over the runs and its ratio to the raw median of its own runtime", () => {
    const samples: Samples = {
      W1: {
        raw: [{ ms: 100 }, { ms: 300 }, { ms: 200 }],
        us: [{ ms: 260 }, { ms: 220 }, { ms: 240 }],
        pi: [{ ms: 150 }, { ms: 100 }, { ms: 5000 }],
        omp: [{ ms: 1000 }, { ms: 1200 }, { ms: 1100 }],
        "raw-bun": [{ ms: 500 }, { ms: 400 }, { ms: 440 }],
      },
    };
    const { markdown, cells } = renderTable(samples, [row]);
    expect(cells["W1 appends"]!.raw).toEqual({ median: 200, ratio: null, text: "200 ms" });
    expect(cells["W1 appends"]!.us).toMatchObject({ median: 240, ratio: 1.2, text: "240 ms (1.20×)" });
    expect(cells["W1 appends"]!.pi).toMatchObject({ median: 150, ratio: 0.75 });
    // omp runs on Bun only: its ratio divides by raw Bun (440), not raw Node (200).
    expect(cells["W1 appends"]!.omp).toMatchObject({ median: 1100, ratio: 2.5 });
    expect(cells["W1 appends"]!["raw-bun"]).toEqual({ median: 440, ratio: null, text: "440 ms" });
    expect(markdown.split("\n")).toEqual([
      "| workload | raw Node | pi | us | raw Bun | omp (Bun) |",
      "|---|---|---|---|---|---|",
      "| W1 appends | 200 ms | 150 ms (0.75×) | 240 ms (1.20×) | 440 ms | 1,100 ms (2.50×) |",
    ]);
  });

  it('prints "—" with the reason for a peer without the API and for a column the row does not read', () => {
    const samples: Samples = { W6: { raw: [{ ms: 5 }], pi: [{ unsupported: "no artifacts dir" }] } };
    const spec: RowSpec = { ...row, jobs: { raw: "W6", pi: "W6" }, notes: { omp: "(one mode: row above)" } };
    expect(cell(samples, spec, "pi", 5).text).toBe("— (no artifacts dir)");
    expect(cell(samples, spec, "omp", 5).text).toBe("— (one mode: row above)");
    expect(cell(samples, spec, "us", 5).text).toBe("—");
  });

  it("says when a child failed, and how many runs the median rests on", () => {
    const samples: Samples = { W1: { raw: [{ ms: 10 }], us: [{ failed: "exit 1: EMFILE" }], pi: [{ ms: 20 }, { failed: "exit 1" }] } };
    expect(cell(samples, row, "us", 10).text).toBe("failed: exit 1: EMFILE");
    expect(cell(samples, row, "pi", 10)).toMatchObject({ median: 20, ratio: 2, text: "20.0 ms (2.00×) [1 of 2 runs failed]" });
  });

  it("gives no ratio when the baseline of the column's runtime has no figure", () => {
    const samples: Samples = { W1: { raw: [{ failed: "exit 1" }], us: [{ ms: 10 }], "raw-bun": [{ ms: 4 }], omp: [{ ms: 8 }] } };
    const { cells } = renderTable(samples, [row]);
    expect(cells["W1 appends"]!.us).toMatchObject({ median: 10, ratio: null, text: "10.0 ms" });
    expect(cells["W1 appends"]!.omp).toMatchObject({ median: 8, ratio: 2 });
  });
});
