/**
 * @module pages/style
 * The page's stylesheet: plain CSS, readable from a phone to a wide laptop screen. Served in a nonce'd <style>.
 */
export const PAGE_STYLE = `
:root{--fg:#1d2125;--muted:#626f86;--line:#dcdfe4;--bg:#fff;--soft:#f7f8f9;--ok:#1f845a;--warn:#a54800;--bad:#c9372c;--run:#0c66e4}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
main{max-width:1100px;margin:0 auto;padding:12px 16px 48px}
h1{font-size:1.5rem;margin:.3em 0}h2{font-size:1.15rem;margin:1.4em 0 .5em}h3{font-size:1rem;margin:0;display:inline}h4{font-size:.8rem;margin:.6em 0 .2em;color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
p{margin:.35em 0}ul,ol{margin:.3em 0;padding-left:1.3em}
a{color:var(--run)}code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap}
.topbar{display:flex;gap:12px;align-items:center;font-size:.85rem}.brand{font-weight:700;margin-right:auto}
.live{padding:1px 8px;border-radius:10px;background:var(--soft);color:var(--muted)}.live.on{background:#dcfff1;color:var(--ok)}.live.off{background:#fff3eb;color:var(--warn)}
.muted,.times{color:var(--muted);font-size:.9em}.description{white-space:pre-wrap}
.badge{display:inline-block;font-size:.75rem;padding:1px 8px;border-radius:10px;background:var(--soft);vertical-align:middle;font-weight:600}
.s-success{color:var(--ok)}.s-failed{color:var(--bad)}.s-partial_success{color:var(--warn)}.s-active,.s-in_progress{color:var(--run)}
.badge.s-success{background:#dcfff1}.badge.s-failed{background:#ffeceb}.badge.s-partial_success{background:#fff3eb}.badge.s-active,.badge.s-in_progress{background:#e9f2ff}
.totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(110px,1fr));gap:8px;margin:12px 0}
.totals div{background:var(--soft);border-radius:8px;padding:8px 10px}.totals b{display:block;font-size:1.2rem}.totals span{font-size:.8rem;color:var(--muted)}
.review{border:2px solid var(--bad);background:#ffeceb;border-radius:8px;padding:4px 14px;margin:12px 0}.review h2{margin:.4em 0;color:var(--bad)}
.alert{color:var(--bad);font-weight:600}
.tree,.subtasks,.milestones,.cards{list-style:none;padding-left:0}
.subtasks{margin-left:14px;border-left:2px solid var(--line);padding-left:10px}
.task{margin:8px 0}.task-body,.cards>li{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:var(--bg)}
.task-head{display:flex;flex-wrap:wrap;gap:8px;align-items:baseline}
.chip{display:inline-block;font-size:.8rem;background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:0 6px;margin:0 4px 2px 0}
.tag{font-size:.75rem;border-radius:6px;padding:0 6px;background:var(--soft)}.tag.warn{background:#fff3eb;color:var(--warn);font-weight:600}
.filelist{list-style:none;padding-left:0}.filelist li{padding:1px 4px;border-radius:4px}
.out-of-scope{background:#fff3eb;outline:1px solid #f5cd47}
.fs{display:inline-block;width:1.4em;text-align:center;font-weight:700;font-family:ui-monospace,monospace}.fs-A{color:var(--ok)}.fs-D{color:var(--bad)}.fs-M{color:var(--run)}.fs-R{color:var(--warn)}
.milestones{margin:4px 0 0 14px}.milestone{font-size:.9rem}.milestone progress{width:120px;vertical-align:middle}
.options .chosen{font-weight:700}.options .chosen::after{content:" ✓";color:var(--ok)}
.needs-review{border-color:var(--bad)!important;border-width:2px!important}
.tests.t-passed{color:var(--ok)}.tests.t-failed{color:var(--bad)}
.gone{text-align:center;padding-top:20vh}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
.actions form{display:inline-flex;gap:4px;margin:2px 4px 2px 0;align-items:center}
input,button,select{font:inherit;padding:4px 8px}.linkbox{font-size:.8rem;word-break:break-all}
.owner-nav{margin:6px 0}.owner-panel{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:8px 0 4px;align-items:start}
.panel{border:1px solid var(--line);border-radius:8px;padding:4px 14px 10px;background:var(--soft)}.panel h2{margin:.5em 0;font-size:1.05rem}
.panel select,.panel textarea{width:100%;max-width:100%}.verdicts{display:flex;flex-wrap:wrap;gap:12px}
.badge.v-comment{background:#e9f2ff;color:var(--run)}.badge.v-approved{background:#dcfff1;color:var(--ok)}.badge.v-changes_requested{background:#ffeceb;color:var(--bad)}
.feedback.v-changes_requested{border-left:4px solid var(--bad)}.feedback.v-approved{border-left:4px solid var(--ok)}.fb-body{white-space:pre-wrap}
.review-link{font-size:.85rem;margin-left:6px}
.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin:10px 0;padding:10px 12px;background:var(--soft);border-radius:8px}
.filters label{display:flex;flex-direction:column;font-size:.8rem;color:var(--muted);gap:2px}.filters label.check{flex-direction:row;align-items:center;gap:4px;color:var(--fg);font-size:.9rem;padding-bottom:6px}
.filters input[type=search]{min-width:220px}.settings{margin:8px 0}.settings summary{cursor:pointer;color:var(--run)}
.match{font-size:.85rem;margin-top:4px}.num{text-align:right;white-space:nowrap}.workflows th{font-size:.8rem;color:var(--muted);font-weight:600}
.badge,th,.tag,button{white-space:nowrap;overflow-wrap:normal}.panel .actions{display:flex;flex-wrap:wrap;gap:0 8px}.workflows td code{font-size:11px}.workflows td{padding:8px}
.share-manage{display:inline-block;margin-left:6px;font-size:.85rem}.share-manage summary{cursor:pointer;color:var(--run)}.share-manage[open]{display:block;margin:6px 0 0}
.pager{display:flex;gap:16px;justify-content:center;margin:14px 0}.wf-link{text-decoration:none}
@media (max-width:900px){.owner-panel{grid-template-columns:1fr}}
@media (max-width:640px){.filters input[type=search]{min-width:0;width:100%}.filters label{flex:1 1 100%}.num{text-align:left}
 td.num{display:inline-block;width:auto;padding-right:12px}td.num::before{content:attr(data-label) ": ";color:var(--muted)}body{font-size:14px}main{padding:8px 10px 40px}.subtasks{margin-left:4px;padding-left:8px}.totals{grid-template-columns:repeat(3,1fr)}
 table,thead,tbody,tr,th,td{display:block}thead{display:none}tr{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:4px}td{border:0;padding:3px 6px}}
`;
