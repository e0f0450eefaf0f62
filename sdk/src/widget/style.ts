// The widget's look: its shadow root's stylesheet, themed by the host through CSS custom
// properties (--bestex-accent, --bestex-text, --bestex-muted, --bestex-surface, --bestex-radius).

export const STYLE = `
:host { display: block; font: 14px/1.4 system-ui, sans-serif; color: var(--bestex-text, #1b1f24); background: var(--bestex-surface, #fff);
  border: 1px solid var(--bestex-muted, #6a737d); border-radius: var(--bestex-radius, 8px); padding: 12px; max-width: 40rem; }
form { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
.quote { flex-basis: 100%; }
label { display: flex; flex-direction: column; font-size: 12px; color: var(--bestex-text, #1b1f24); }
[part=split] { margin-top: 8px; }
[part=split] > label { flex-direction: row; align-items: center; gap: 6px; font-size: 14px; font-weight: 600; }
input, select, button { font: inherit; padding: 4px 6px; }
button { background: var(--bestex-accent, #0b5cad); color: #fff; border: 0; border-radius: 4px; padding: 6px 12px; cursor: pointer; }
button[aria-disabled=true] { background: var(--bestex-muted, #6a737d); cursor: not-allowed; }
button:focus-visible, input:focus-visible, select:focus-visible, [tabindex="-1"]:focus-visible { outline: 3px solid var(--bestex-accent, #0b5cad); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; margin-top: 8px; }
th, td { text-align: left; padding: 4px; border-bottom: 1px solid #d0d7de; vertical-align: top; }
.unavailable { color: #57606a; }
.note, [part=best-note], [part=edge], [part=impact] { color: #57606a; font-size: 12px; }
[part=best] { font-weight: 600; margin-bottom: 0; }
[part=error], [part=impact-warning] { color: #a40e26; }
[part=error] span { display: block; }
[title] { text-decoration: underline dotted; }
[hidden] { display: none !important; }
`;
