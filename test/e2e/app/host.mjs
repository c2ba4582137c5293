/**
 * The host side of an MCP Apps host, in the browser, built from the extension SDK's own
 * AppBridge and PostMessageTransport (bundled by test/e2e/app.test.ts). The View runs in a
 * sandboxed iframe on another origin; its requests (resources/read, tools/call) are forwarded to
 * the test's MCP client through functions Playwright exposes (`waymarkRead`, `waymarkCall`), as a
 * host forwards them to the server it is connected to.
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.startApp = async (viewUrl, toolInput, toolResult) => {
  // The bridge listens before the View loads: its ui/initialize is the View's first message.
  const frame = document.createElement("iframe");
  frame.id = "view";
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.style.width = "100%";
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: "waymark-test-host", version: "1" }, { serverTools: {}, serverResources: {} });
  bridge.onreadresource = (params) => window.waymarkRead(params);
  bridge.oncalltool = (params) => window.waymarkCall(params);
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: toolInput });
    await bridge.sendToolResult(toolResult);
    document.body.dataset.initialized = "yes";
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = viewUrl;
};
