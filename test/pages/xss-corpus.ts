/**
 * Payloads written into every agent-written field by the page tests. Each one would run
 * code (setting window.__xss or opening a dialog) or inject markup/links if it reached
 * the page, the live client or the Markdown export unescaped. All fit the 200-char bound.
 */
export const XSS_PAYLOADS = [
  "<script>window.__xss=1</script>",
  '"><img src=x onerror="window.__xss=2">',
  "'><svg onload=window.__xss=3>",
  "<svg><script>window.__xss=4</script></svg>",
  "javascript:window.__xss=5",
  '<a href="javascript:window.__xss=6">click me</a>',
  "</style></script><script>window.__xss=7</script>",
  '<iframe srcdoc="<script>parent.__xss=8</script>"></iframe>',
  "<details open ontoggle=window.__xss=9>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection payload, meant literally
  "${window.__xss=10}",
  "{{constructor.constructor('window.__xss=11')()}}",
  "\u202e<b>gnp.exe</b>\u200b<scr\u200bipt>window.__xss=12</script>",
  "\uff1cscript\uff1ewindow.__xss=13\uff1c/script\uff1e",
  "[click](javascript:window.__xss=14) ![x](https://evil.example/t.png) <b>#</b>",
  "# Heading\n* list\n| a | b |\n`code` <!-- c -->",
  "&lt;script&gt;window.__xss=15&lt;/script&gt;",
] as const;

/** Paths must be valid repository paths: no empty or dot segments, not absolute. */
export function asRepoPath(payload: string, label: string): string {
  const cleaned = payload
    .replace(/\/+/g, "/")
    .split("/")
    .map((segment) => (segment === "" || segment === "." || segment === ".." ? "x" : segment))
    .join("/");
  return `${label.replace(/\.ts$/, "")}-${cleaned}.ts`.replace(/\n/g, " ");
}
