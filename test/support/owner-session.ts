/**
 * @module test/support/owner-session
 * The owner as a browser is the owner: a dashboard session signed in through the /login form (its
 * cookie), and a verdict or comment given through a workflow page's feedback form with it, over
 * real HTTP to a `wrangler dev`. For tests and benches that need a person's review without a
 * browser (forms are clicked in Chromium where the form itself is under test).
 *
 * Relative imports carry their `.ts` extension, so the benches can load this file through Node's
 * type stripping.
 */

/** Signs in with `token` as the /login form does; the session cookie (name=value). */
export async function ownerSession(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: url },
    body: new URLSearchParams({ token }).toString(),
    redirect: "manual",
  });
  const cookie = (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
  if (response.status !== 303 || cookie === "") throw new Error(`/login answered ${response.status} without a session`);
  return cookie;
}

/** Posts the workflow page's feedback form on a task; throws unless the page answered with its redirect. */
export async function reviewTask(
  url: string,
  cookie: string,
  review: { workflow: string; task: string; verdict: "approved" | "changes_requested" | "comment"; body: string },
): Promise<void> {
  const response = await fetch(`${url}/w/${review.workflow}/feedback`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: url, Cookie: cookie },
    body: new URLSearchParams({ target: `task:${review.task}`, verdict: review.verdict, body: review.body }).toString(),
    redirect: "manual",
  });
  if (response.status !== 303)
    throw new Error(`feedback on ${review.task} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
}
