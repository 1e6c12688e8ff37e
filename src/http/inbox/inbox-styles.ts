/** The inbox's stylesheet: system fonts, visible focus, colours that keep WCAG AA contrast. */
export const inboxStyles = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --bad: #a40e26; --good: #116329; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--ink); background: #f6f8fa; }
.bar { display: flex; gap: 1rem; align-items: center; padding: .6rem 1.2rem; background: #fff; border-bottom: 1px solid var(--line); }
.bar form { margin-left: auto; }
.brand { font-weight: 600; color: var(--ink); text-decoration: none; }
main { max-width: 62rem; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 1.6rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.card, .approvals > li, .approval { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem; margin: .6rem 0; }
.approvals { list-style: none; padding: 0; }
label { display: block; font-weight: 600; margin: .5rem 0 .2rem; }
input, textarea { font: inherit; width: 100%; padding: .4rem .5rem; border: 1px solid var(--muted); border-radius: 4px; }
textarea { font-family: ui-monospace, monospace; min-height: 7rem; }
textarea[aria-invalid="true"], input[aria-invalid="true"] { border-color: var(--bad); }
textarea[readonly], input:disabled { background: #eef1f4; border-style: dashed; color: var(--muted); cursor: not-allowed; }
.count { margin: .2rem 0 0; font-size: .9em; }
.count.error { color: var(--bad); font-weight: 600; }
.description { margin: .2rem 0; }
.expires-soon { border-left: 4px solid var(--bad); }
.soon { color: var(--bad); }
.approval.closed .outcome { font-weight: 600; }
details.input summary { cursor: pointer; color: var(--accent); }
button { font: inherit; margin: .6rem .4rem 0 0; padding: .4rem .9rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { opacity: .55; cursor: not-allowed; }
button.quiet { background: #fff; color: var(--accent); margin: 0; }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
.error, .issues { color: var(--bad); }
.issues { margin: .3rem 0; padding-left: 1.2rem; }
.muted { color: var(--muted); }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 4px; padding: .4rem .6rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .3rem 0; }
.timeline { padding-left: 1.2rem; }
.timeline li { margin: .5rem 0; }
.timeline .type { font-weight: 600; }
.timeline .streaming { border-left: 3px solid var(--accent); padding-left: .5rem; }
.status-completed { color: var(--good); } .status-completed-undone { color: var(--ink); font-weight: 600; } .status-failed, .status-cancelled { color: var(--bad); }
`;
