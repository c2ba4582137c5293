/**
 * @module test/support/github-api
 * A local HTTP server that answers the part of GitHub's REST API a sticky pull-request comment uses
 * (list, create and update issue comments) as GitHub's published description says: the operations,
 * paths, parameters, request bodies, status codes and response schemas come from
 * test/fixtures/github/rest-issue-comments.json, an excerpt of the description (@octokit/openapi's
 * api.github.com.deref.json, from github/rest-api-description). A request the description does not
 * have is a 404; a body its schema refuses is a 422 as GitHub words it; every response the server
 * sends is validated against the description's schema first, so a client that reads a field GitHub
 * does not promise finds it missing here too. Pagination follows GitHub's `Link: rel="next"` header.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import description from "../fixtures/github/rest-issue-comments.json";

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  parameters: { name: string; in: string; required?: boolean; schema: Json }[];
  requestBody?: { content: { "application/json": { schema: Json } } };
  responses: Record<string, { content?: { "application/json": { schema: Json } } }>;
};

export interface StoredComment {
  id: number;
  body: string;
  /** The login it was posted as. */
  login: string;
  created_at: string;
  updated_at: string;
}

export interface ApiRequest {
  operation: string;
  method: string;
  path: string;
  status: number;
  body: unknown;
}

export interface GithubApi {
  url: string;
  comments: StoredComment[];
  requests: ApiRequest[];
  /** Responses the server would have sent that its own description refuses (must stay empty). */
  invalid: string[];
  close(): Promise<void>;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const DOCS = "https://docs.github.com/rest/issues/comments";

const BOT = {
  login: "github-actions[bot]",
  id: 41898282,
  node_id: "MDM6Qm90NDE4OTgyODI=",
  avatar_url: "https://avatars.githubusercontent.com/in/15368?v=4",
  gravatar_id: "",
  url: "https://api.github.com/users/github-actions%5Bbot%5D",
  html_url: "https://github.com/apps/github-actions",
  followers_url: "https://api.github.com/users/github-actions%5Bbot%5D/followers",
  following_url: "https://api.github.com/users/github-actions%5Bbot%5D/following{/other_user}",
  gists_url: "https://api.github.com/users/github-actions%5Bbot%5D/gists{/gist_id}",
  starred_url: "https://api.github.com/users/github-actions%5Bbot%5D/starred{/owner}{/repo}",
  subscriptions_url: "https://api.github.com/users/github-actions%5Bbot%5D/subscriptions",
  organizations_url: "https://api.github.com/users/github-actions%5Bbot%5D/orgs",
  repos_url: "https://api.github.com/users/github-actions%5Bbot%5D/repos",
  events_url: "https://api.github.com/users/github-actions%5Bbot%5D/events{/privacy}",
  received_events_url: "https://api.github.com/users/github-actions%5Bbot%5D/received_events",
  type: "Bot",
  site_admin: false,
};

/** The description's path templates as regular expressions, with their operations by method. */
const routes = Object.entries(description.paths as unknown as Record<string, Record<string, Operation>>).map(([template, methods]) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{(\w+)\}/g, "(?<$1>[^/]+)")}$`),
  methods,
}));

/**
 * Starts the server for one repository and pull request. `token`: the only Authorization the
 * server accepts; `others`: comments of other people already on the pull request (the marker
 * comment is then found on a later page).
 */
export async function startGithubApi(options: { repository: string; pull: number; token: string; others?: number }): Promise<GithubApi> {
  const comments: StoredComment[] = [];
  const requests: ApiRequest[] = [];
  const invalid: string[] = [];
  let nextId = 1_000_000;
  const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  for (let i = 0; i < (options.others ?? 0); i++) {
    comments.push({ id: nextId++, body: `a person's comment ${i}`, login: "octocat", created_at: now(), updated_at: now() });
  }
  let origin = "";

  const commentJson = (comment: StoredComment) => ({
    id: comment.id,
    node_id: Buffer.from(`IC_${comment.id}`).toString("base64"),
    url: `${origin}/repos/${options.repository}/issues/comments/${comment.id}`,
    html_url: `https://github.com/${options.repository}/pull/${options.pull}#issuecomment-${comment.id}`,
    issue_url: `${origin}/repos/${options.repository}/issues/${options.pull}`,
    body: comment.body,
    user:
      comment.login === BOT.login ? BOT : { ...BOT, login: comment.login, type: "User", html_url: `https://github.com/${comment.login}` },
    created_at: comment.created_at,
    updated_at: comment.updated_at,
    author_association: comment.login === BOT.login ? "NONE" : "MEMBER",
  });

  function send(res: ServerResponse, operation: Operation, status: number, body: unknown, headers: Record<string, string> = {}) {
    const schema = operation.responses[String(status)]?.content?.["application/json"]?.schema;
    if (!(String(status) in operation.responses)) invalid.push(`${operation.operationId}: status ${status} is not in the description`);
    else if (schema && !ajv.validate(schema, body)) invalid.push(`${operation.operationId} ${status}: ${ajv.errorsText()}`);
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", origin);
    const route = routes.map((r) => ({ r, match: r.pattern.exec(url.pathname) })).find((x) => x.match !== null);
    const operation = route?.r.methods[(req.method ?? "").toLowerCase()];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const record = (status: number, body: unknown) =>
      requests.push({
        operation: operation?.operationId ?? "none",
        method: req.method ?? "",
        path: url.pathname + url.search,
        status,
        body,
      });
    if (!route?.match || !operation) {
      record(404, raw);
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ message: "Not Found", documentation_url: "https://docs.github.com/rest" }));
      return;
    }
    const params = route.match.groups ?? {};
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      record(401, raw);
      res.writeHead(401, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" }));
      return;
    }
    // Path parameters as the description types them; a repository or pull request other than this one does not exist.
    for (const parameter of operation.parameters.filter((p) => p.in === "path")) {
      const value = params[parameter.name] ?? "";
      if (parameter.schema.type === "integer" && !/^\d+$/.test(value)) return notFound();
    }
    if (`${params.owner}/${params.repo}` !== options.repository) return notFound();
    if (params.issue_number !== undefined && Number(params.issue_number) !== options.pull) return notFound();
    let body: unknown = null;
    if (operation.requestBody) {
      try {
        body = JSON.parse(raw);
      } catch {
        return unprocessable("Problems parsing JSON", []);
      }
      const schema = operation.requestBody.content["application/json"].schema;
      if (!ajv.validate(schema, body)) return unprocessable("Invalid request.", [{ code: "invalid", message: ajv.errorsText() }]);
      const text = (body as { body: string }).body;
      if (text.length > 65_536) {
        return unprocessable("Validation Failed", [
          { resource: "IssueComment", code: "custom", field: "body", message: "body is too long (maximum is 65536 characters)" },
        ]);
      }
    }
    record(0, body);
    const done = (status: number, payload: unknown, headers?: Record<string, string>) => {
      (requests.at(-1) as ApiRequest).status = status;
      send(res, operation, status, payload, headers);
    };
    switch (operation.operationId) {
      case "issues/list-comments": {
        const perPage = Math.min(Math.max(Number(url.searchParams.get("per_page") ?? "30") || 30, 1), 100);
        const page = Math.max(Number(url.searchParams.get("page") ?? "1") || 1, 1);
        const slice = comments.slice((page - 1) * perPage, page * perPage);
        const headers: Record<string, string> = {};
        if (page * perPage < comments.length) {
          const next = new URL(url);
          next.searchParams.set("page", String(page + 1));
          next.searchParams.set("per_page", String(perPage));
          headers.Link = `<${next.href}>; rel="next"`;
        }
        return done(200, slice.map(commentJson), headers);
      }
      case "issues/create-comment": {
        const comment = { id: nextId++, body: (body as { body: string }).body, login: BOT.login, created_at: now(), updated_at: now() };
        comments.push(comment);
        const json = commentJson(comment);
        return done(201, json, { Location: json.url });
      }
      case "issues/update-comment": {
        const comment = comments.find((c) => c.id === Number(params.comment_id));
        if (!comment) return notFound();
        comment.body = (body as { body: string }).body;
        comment.updated_at = now();
        return done(200, commentJson(comment));
      }
    }
    return notFound();

    function notFound() {
      record(404, raw);
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ message: "Not Found", documentation_url: DOCS }));
    }
    function unprocessable(message: string, errors: Json[]) {
      record(422, raw);
      send(res, operation as Operation, 422, { message, errors, documentation_url: DOCS });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      invalid.push(String(error));
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    comments,
    requests,
    invalid,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
