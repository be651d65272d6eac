/**
 * Styles of the entries the shared renderer (`entry-html.ts`) draws: the viewer's pages and the
 * frozen HTML export both use them, each beside its own page style.
 */
export const ENTRY_STYLE = `
article.entry > header { display: flex; gap: 10px; align-items: baseline; color: var(--muted); font-size: 13px; }
article.entry h3 { margin: 0; font-size: 14px; color: var(--fg); } article.entry .anchor { margin-left: auto; text-decoration: none; }
article.role-toolResult { margin-left: 24px; }
article.role-compaction, article.role-branch_summary, article.role-compactionSummary, article.role-branchSummary { border-style: dashed; }
.md pre.code { background: var(--tool); } .md p { margin: 0.4em 0; }
.tool-call summary code { font-weight: 600; } .tool-name { color: var(--muted); font-size: 12px; }
.continue { display: block; color: var(--muted); font-size: 11px; margin-top: 4px; }
.hl-keyword { color: #a626a4; } .hl-string { color: #50a14f; } .hl-number { color: #986801; }
.hl-comment { color: #8a919a; font-style: italic; }
@media (prefers-color-scheme: dark) { .hl-keyword { color: #c678dd; } .hl-string { color: #98c379; } .hl-number { color: #d19a66; } }
`;
