/**
 * @module pages/style
 * The pages' stylesheet: plain CSS, readable from a phone to a wide laptop screen, in light
 * and dark colour schemes, and on paper. Served in a nonce'd <style> (the CSP allows no inline
 * style attributes, hence the bar width classes). The screen shows things in the document's
 * order (no reordering), so reading, Tab and screen-reader order are the visual order. Colours
 * meet WCAG 2.1 AA contrast in both schemes; links and buttons are at least 24×24 px on a phone.
 */
import { BAR_STEPS } from "./files";

/** `.w0`…`.w20`: a bar segment's width in steps of 100 / BAR_STEPS percent of the bar. */
const BAR_WIDTHS = Array.from({ length: BAR_STEPS + 1 }, (_, i) => `.bar .w${i}{width:${(i * 100) / BAR_STEPS}%}`).join("");

export const PAGE_STYLE = `
:root{color-scheme:light dark;--focus:#0c66e4;--fg:#1d2125;--muted:#5e6c84;--line:#dcdfe4;--bg:#fff;--soft:#f4f5f7;--card:#fff;--ok:#216e4e;--ok-bg:#dcfff1;--warn:#a54800;--warn-bg:#fff3eb;--bad:#c9372c;--bad-bg:#ffeceb;--run:#0c66e4;--run-bg:#e9f2ff;--add:#216e4e;--del:#c9372c}
@media (prefers-color-scheme:dark){:root{--focus:#85b8ff;--fg:#dee4ea;--muted:#9fadbc;--line:#38414a;--bg:#161a1d;--soft:#22272b;--card:#1d2125;--ok:#4bce97;--ok-bg:#1c3329;--warn:#fea362;--warn-bg:#3a2719;--bad:#f87168;--bad-bg:#42221f;--run:#579dff;--run-bg:#1c2b41;--add:#4bce97;--del:#f87168}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:break-word}
code,.path,.repo,.what,.fb-body,.description{overflow-wrap:anywhere}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px;border-radius:3px}
.skip{position:absolute;left:8px;top:-60px;z-index:10;padding:8px 12px;background:var(--bg);color:var(--run);border:2px solid var(--focus);border-radius:6px}.skip:focus,.skip:focus-visible{top:8px}
main{max-width:1100px;margin:0 auto;padding:12px 16px 48px}
h1{font-size:1.5rem;margin:.3em 0}h2{font-size:1.15rem;margin:1.2em 0 .5em}
.label{display:block;font-size:.78rem;margin:.7em 0 .2em;color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
.sr-only{position:absolute!important;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
p{margin:.35em 0}ul,ol{margin:.3em 0;padding-left:1.3em}
a{color:var(--run)}code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap}
.topbar{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center;font-size:.85rem}.brand{font-weight:700;margin-right:auto}
.live{padding:1px 8px;border-radius:10px;background:var(--soft);color:var(--muted)}.live.on{background:var(--ok-bg);color:var(--ok)}.live.on::before{content:"● "}.live.off{background:var(--warn-bg);color:var(--warn)}
.live[hidden]{display:none}
.muted,.times{color:var(--muted);font-size:.9em}.description{white-space:pre-wrap}
.badge{display:inline-block;font-size:.75rem;line-height:1.5;padding:0 8px;border-radius:10px;border:1px solid var(--line);background:var(--soft);color:var(--fg);vertical-align:middle;font-weight:600}
.badge .shape{font-size:.9em}
.v-approved,.rv-approved{background:var(--ok-bg);border-color:var(--ok)}.v-approved .shape,.rv-approved .shape{color:var(--ok)}.st-success .shape{color:var(--ok)}
.badge .claim{font-weight:400;color:var(--muted)}
.st-failed,.v-changes_requested,.rv-changes_requested{background:var(--bad-bg);border-color:var(--bad)}.st-failed .shape,.v-changes_requested .shape,.rv-changes_requested .shape{color:var(--bad)}
.rv-open{background:var(--warn-bg);border-color:var(--warn)}.rv-open .shape{color:var(--warn)}
.st-partial_success{background:var(--warn-bg);border-color:var(--warn)}.st-partial_success .shape{color:var(--warn)}
.st-active,.st-in_progress,.v-comment{background:var(--run-bg);border-color:var(--run)}.st-active .shape,.st-in_progress .shape{color:var(--run)}
h1 .badge{font-size:.85rem;font-weight:600}
.totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(105px,1fr));gap:8px;margin:12px 0}
.totals div{background:var(--soft);border-radius:8px;padding:6px 10px}.totals b{display:block;font-size:1.15rem}.totals span{font-size:.78rem;color:var(--muted)}
.box{border:1px solid var(--line);border-radius:8px;padding:2px 14px 8px;margin:10px 0;background:var(--card)}.box h2{margin:.5em 0;font-size:1.05rem}
.count{font-size:.8rem;font-weight:400;color:var(--muted);margin-left:6px}
.needs{border:2px solid var(--warn)}.needs .count{color:inherit}
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:10px;margin:10px 0;align-items:start}.answers .box{margin:0}
.source{font-size:.8rem;color:var(--muted);margin:0 0 .4em}
.nr-list{list-style:none;padding-left:0}.nr{padding:4px 0;border-top:1px solid var(--line)}.nr:first-child{border-top:0}
.rv{display:inline-block;margin-left:6px;font-size:.85rem;vertical-align:top}.rv>summary{cursor:pointer;color:var(--run);min-height:24px;line-height:24px;padding:0 4px}.rv[open]{display:block;margin:4px 0 6px}
.rv-form{display:flex;flex-direction:column;gap:4px;max-width:560px}.rv-form textarea{width:100%}.rv-buttons{display:flex;flex-wrap:wrap;gap:6px}.rv-status{font-size:.85rem}.rv-status.fail{color:var(--bad);font-weight:600}
.figures{font-size:.9em;margin-top:.5em}.settled summary{cursor:pointer;color:var(--run);font-size:.9em}
.checks-summary{list-style:none;padding-left:0}.checks-summary li{margin:.2em 0}.ck-failed{color:var(--bad);font-weight:600}.ck-passed{color:var(--ok)}
.check-tasks{padding-left:1.1em;font-size:.9em}.check-tasks li{margin:.25em 0}
table.changed td{padding:3px 6px;vertical-align:baseline}table.changed td a{display:inline-block;min-height:24px;line-height:24px}table.changed .cmd{font-size:11px;color:var(--muted)}table.changed .diff{font-size:.85rem}
table.changed tr.out-of-scope{background:var(--warn-bg)}
.banner{border:2px solid var(--warn);background:var(--warn-bg);border-radius:8px;padding:4px 14px;margin:10px 0}
.success{border:2px solid var(--ok);background:var(--ok-bg);border-radius:8px;padding:2px 14px 8px;margin:10px 0}.success h2{color:var(--ok)}
.notice{border:2px solid var(--run);background:var(--run-bg);border-radius:8px;padding:2px 14px 8px;margin:10px 0}
.kind{display:inline-block;font-size:.7rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);border:1px solid var(--line);border-radius:4px;padding:0 4px;vertical-align:1px}
.alert{color:var(--bad);font-weight:600}
.plan .steps{padding-left:0;list-style:none}.plan .step{padding:2px 0}.step-mark{display:inline-block;width:1.2em;color:var(--muted)}.step.done .step-mark{color:var(--ok);font-weight:700}
.tree,.timeline,.cards{list-style:none;padding-left:0;margin:0}
.task{margin:8px 0}
.task-card{border:1px solid var(--line);border-radius:8px;background:var(--card)}
.task-card>summary{cursor:pointer;padding:8px 12px;display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline;list-style-position:outside}
.task-card>summary::marker{color:var(--muted)}
.task-card[open]>summary{border-bottom:1px solid var(--line)}
.task-line{display:inline-flex;gap:8px;align-items:baseline;min-width:0}.task-name{display:inline;font-size:1rem;margin:0}
.legend{font-size:.8rem}.legend .fs{width:auto}.more-files{font-size:.9rem}
.facts{display:inline-flex;flex-wrap:wrap;gap:2px 10px;font-size:.85rem;color:var(--muted)}
.task-body{padding:6px 12px 4px}
.timeline{margin:0 0 6px 12px;border-left:2px solid var(--line);padding:0 10px 0 12px}
.timeline>.task{margin:8px 0}.timeline:empty{display:none}
.item{position:relative;padding:4px 0;font-size:.92rem}.item::before{content:"";position:absolute;left:-18px;top:.85em;width:10px;height:10px;border-radius:50%;background:var(--bg);border:2px solid var(--muted)}
.item.decision::before{border-color:var(--run);border-radius:2px}.item.issue::before{border-color:var(--warn);transform:rotate(45deg);border-radius:1px}.item.needs-review::before{border-color:var(--bad);background:var(--bad)}
.item p{margin:.15em 0}.item time,.feedback time{font-size:.8rem;color:var(--muted)}
.item.needs-review{background:var(--bad-bg);border-radius:6px;padding:4px 8px;margin-left:-8px}
.chip{display:inline-block;font-size:.78rem;background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:0 6px;margin:0 2px 2px 0}
.plan-chip{color:var(--ok)}
.tag{font-size:.75rem;border-radius:6px;padding:0 6px;background:var(--soft);border:1px solid var(--line);font-weight:600}.tag.warn{background:var(--warn-bg);color:var(--warn);border-color:var(--warn)}
table.files{width:100%;border-collapse:collapse;margin:2px 0;table-layout:fixed}table.files td{border-bottom:1px solid var(--line);padding:3px 6px;vertical-align:baseline}
table.files .cs{width:1.9em}table.files .cn{width:4.2em}table.files .cb{width:96px}table.files td:first-child{padding-left:2px}
table.files .num{text-align:right;white-space:nowrap;font:12px ui-monospace,monospace;overflow:hidden;text-overflow:ellipsis}table.files .tag{display:inline-block;white-space:normal;max-width:100%;margin:1px 0}
tr.out-of-scope{background:var(--warn-bg)}tr.out-of-scope td:first-child{box-shadow:inset 3px 0 var(--warn)}
.add{color:var(--add)}.del{color:var(--del)}.who{font-size:.75rem;color:var(--muted);white-space:nowrap}
td.bar{padding-right:0;white-space:nowrap;overflow:hidden;font-size:0}.bar span{display:inline-block;height:8px;vertical-align:middle}.bar .b-add{background:var(--add);border-radius:2px 0 0 2px}.bar .b-oth{background:repeating-linear-gradient(135deg,var(--add) 0 2px,transparent 2px 4px)}.bar .b-nob{box-sizing:border-box;border:1px dashed var(--muted)}.bar .b-del{background:var(--del);border-radius:0 2px 2px 0}
${BAR_WIDTHS}
.fs{display:inline-block;width:1.4em;text-align:center;font-weight:700;font-family:ui-monospace,monospace}.fs-A{color:var(--add)}.fs-D{color:var(--del)}.fs-M{color:var(--run)}.fs-R{color:var(--warn)}
.milestone progress{width:100px;vertical-align:middle}
.options .chosen{font-weight:700}.options .chosen::after{content:" ✓";color:var(--ok)}
.exit{white-space:nowrap;font-weight:600}.exit-pass{color:var(--ok)}.exit-fail{color:var(--bad)}.exit-unknown{color:var(--muted)}
.checks .runs{margin:.2em 0 .4em;padding-left:1.6em;font-size:.9em}.commands-observed summary{cursor:pointer;color:var(--run);font-size:.9em}
.commit-list{list-style:none;padding-left:0}.commit-list code{color:var(--muted)}
.gone{text-align:center;padding-top:20vh}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
.actions form{display:inline-flex;gap:4px;margin:2px 4px 2px 0;align-items:center}
input,button,select,textarea{font:inherit;padding:4px 8px}.linkbox{font-size:.8rem;word-break:break-all}
.owner-nav{margin:6px 0}
.panel{border:1px solid var(--line);border-radius:8px;padding:4px 14px 10px;background:var(--soft);margin:10px 0}.panel h2{margin:.5em 0;font-size:1.05rem}
.panel select,.panel textarea{width:100%;max-width:100%}.panel .actions select{width:auto}
fieldset.verdicts{display:flex;flex-wrap:wrap;gap:12px;border:0;padding:0;margin:.35em 0}fieldset.verdicts legend{padding:0;margin-bottom:2px}.verdicts label{min-height:24px}
.feedback{border:1px solid var(--line);border-radius:8px;padding:6px 10px;margin:6px 0;background:var(--card)}
.feedback.v-changes_requested{border-left:4px solid var(--bad)}.feedback.v-approved{border-left:4px solid var(--ok)}.fb-body{white-space:pre-wrap}
.review-link,.comment-link{font-size:.82rem;margin-left:6px;display:inline-block;min-width:24px;min-height:24px;padding:2px 4px;line-height:20px}
.rv-inline{display:block;margin:4px 0 8px;padding:6px 10px;border:1px solid var(--line);border-radius:8px;background:var(--soft)}
.pager a,.owner-nav a,.topbar a{display:inline-block;min-height:24px;padding:2px 0;line-height:20px}
.chain{margin-top:24px;font-size:.8rem;color:var(--muted)}
[hidden]{display:none!important}
.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin:10px 0;padding:10px 12px;background:var(--soft);border-radius:8px}
.filters label{display:flex;flex-direction:column;font-size:.8rem;color:var(--muted);gap:2px}.filters label.check{flex-direction:row;align-items:center;gap:4px;color:var(--fg);font-size:.9rem;padding-bottom:6px}
.filters input[type=search]{min-width:220px}.settings{margin:8px 0}.settings summary{cursor:pointer;color:var(--run)}
.match{font-size:.85rem;margin-top:4px}.num{text-align:right;white-space:nowrap}.workflows th{font-size:.8rem;color:var(--muted);font-weight:600}
.badge,th,.tag,button{white-space:nowrap;overflow-wrap:normal}.panel .actions{display:flex;flex-wrap:wrap;gap:0 8px}.workflows td code{font-size:11px}.workflows td{padding:8px}.workflows .repo{overflow-wrap:anywhere}
.share-manage{display:inline-block;margin-left:6px;font-size:.85rem}.share-manage summary{cursor:pointer;color:var(--run)}.share-manage[open]{display:block;margin:6px 0 0}
.pager{display:flex;gap:16px;justify-content:center;margin:14px 0}.wf-link{text-decoration:none}
@media (max-width:640px){.filters input[type=search]{min-width:0;width:100%}.filters label{flex:1 1 100%}.num{text-align:left}
 td.num{display:inline-block;width:auto;padding-right:12px}td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}body{font-size:14px}main{padding:8px 10px 40px}
 .totals{grid-template-columns:repeat(3,1fr);gap:6px}.totals div{padding:4px 8px}.totals b{font-size:1.05rem}.timeline{margin-left:4px;padding:0 4px 0 10px}.task-card>summary{padding:8px}.task-body{padding:6px 8px 4px}
 table.files .cb{width:0}td.bar{padding:0}table.files .cn{width:3.1em}table.files .num{font-size:11px;padding:3px 2px}
 table:not(.files),table:not(.files) thead,table:not(.files) tbody,table:not(.files) tr,table:not(.files) th,table:not(.files) td{display:block}table:not(.files) thead{display:none}
 table:not(.files) tr{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:4px}table:not(.files) td{border:0;padding:3px 6px}
 table.files td.num{display:table-cell;text-align:right}table.files td.num::before{content:none}
 .share-manage summary,.settings summary{min-height:24px;line-height:24px}
 table.changed tr{padding:6px 8px}table.changed td{display:inline;padding:0 6px 0 0}table.changed td::before{content:none!important}table.changed td.diff{display:block;margin-top:2px}}
@media print{
 :root{--fg:#000;--muted:#444;--line:#bbb;--bg:#fff;--soft:#fff;--card:#fff}
 body{font-size:11pt}main{max-width:none;padding:0}
 .topbar,.owner-nav,#share,#feedback,.review-link,.comment-link,.live,.rv,.rv-inline,.skip{display:none!important}
 details::details-content{content-visibility:visible;display:contents}
 .task-card>summary{list-style:none}.task-card>summary::marker,.task-card>summary::-webkit-details-marker{display:none;content:""}
 .task,.item,tr{break-inside:avoid}a{color:inherit;text-decoration:none}
 .bar span{print-color-adjust:exact;-webkit-print-color-adjust:exact}
}
`;
