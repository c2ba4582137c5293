export default {
  async fetch(): Promise<Response> {
    return new Response("waymark");
  },
};
export class WorkflowObject {}
export class AccountObject {}
