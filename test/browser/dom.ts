/**
 * The little of the DOM that the browser tests' page.evaluate callbacks touch. Declared
 * per test module (`declare const document: DomDocument`) instead of adding lib "dom" to
 * the whole program, which also type-checks Worker code that has no DOM.
 */
export interface DomElement {
  id: string;
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  attributes: ArrayLike<{ name: string }> & Iterable<{ name: string }>;
  getAttribute(name: string): string | null;
}

export interface DomDocument {
  getElementById(id: string): DomElement | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement> & Iterable<DomElement>;
  documentElement: { scrollWidth: number };
  scripts: { length: number };
  addEventListener(type: "securitypolicyviolation", listener: (event: { violatedDirective: string; sample: string }) => void): void;
}

export interface DomWindow {
  innerWidth: number;
}

/** Elements as the review page test walks them. */
export interface DomNode {
  id: string;
  className: string;
  textContent: string | null;
  open?: boolean;
  children: ArrayLike<DomNode>;
  querySelector(selector: string): DomNode | null;
}
