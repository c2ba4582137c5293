/**
 * @module pages/client/owner
 * The owner pages' one script (dashboard, tokens, consent; inlined with the response's CSP
 * nonce): times in the viewer's zone, and copy buttons for what is shown once (a new token's
 * secret) or meant to be passed on (a share link). A copy button names its source with
 * `data-copy="<element id>"` and says what happened in its own status region.
 */
import { localizeTimes } from "./local-time";

localizeTimes(document);
wireCopyButtons(document);

function wireCopyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    const source = document.getElementById(button.dataset.copy ?? "");
    const status = document.getElementById(`${button.dataset.copy}-copied`);
    if (!source) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      const text = source.textContent ?? "";
      const said = (message: string) => {
        if (status) status.textContent = message;
      };
      navigator.clipboard.writeText(text).then(
        () => said("Copied to the clipboard."),
        () => {
          // No clipboard permission: select the text, so the viewer can copy it by hand.
          const range = document.createRange();
          range.selectNodeContents(source);
          getSelection()?.removeAllRanges();
          getSelection()?.addRange(range);
          said("Selected: press Ctrl+C (⌘C) to copy.");
        },
      );
    });
  }
}
