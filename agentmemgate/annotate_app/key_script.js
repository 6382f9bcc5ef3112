(() => {
  /* amg keys */
  if (window.amgKeys) return;
  window.amgKeys = true;
  const named = {enter: "%(submit)s", b: "%(back)s", n: "%(next)s"};
  const queue = [];
  let timer = null;
  let sent = null;  /* the last press: {at, ran}, until the run it started has ended */
  /* A number key only chooses, in the page: the choice is shown at once and sent with Enter, as
     one press of its hidden "choose and submit" button, so a label costs one run, not two.
     Any run (Enter, a click, B or N) ends the choice shown here and the server draws its own. */
  let picked = null;  /* {n, text: the choice line as the server drew it} */
  const chosenLine = () => {  /* the line's text node: changed in place, so React still owns it */
    const box = document.querySelector(".st-key-%(chosen)s");
    const walker = box && document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    let node = walker && walker.nextNode();
    while (node && !node.nodeValue.trim()) node = walker.nextNode();
    return node;
  };
  const unpick = () => {
    if (!picked) return;
    document.querySelectorAll(".amg-picked").forEach((el) => el.classList.remove("amg-picked"));
    document.body.classList.remove("amg-picking");
    const line = chosenLine();
    if (line) line.nodeValue = picked.text;
    picked = null;
  };
  const pick = (n, button) => {
    const line = chosenLine();
    const text = picked ? picked.text : line && line.nodeValue;
    unpick();
    if (button.getAttribute("kind") === "primary") return;  /* the server's own choice already */
    const box = document.querySelector(".st-key-%(choice)s" + n);
    const label = box.querySelector('[data-testid="stMarkdownContainer"]') || button;
    box.classList.add("amg-picked");
    document.body.classList.add("amg-picking");
    if (line) line.nodeValue = "Your choice: " + label.innerText.trim();
    picked = {n, text};
  };
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app && app.getAttribute("data-test-script-state") === "running") {
      unpick();
      if (sent) sent.ran = true;
    }
  }).observe(document.documentElement,
             {subtree: true, attributes: true, attributeFilter: ["data-test-script-state"]});
  const answered = () => {  /* the last press's run is over (or none started within a second) */
    if (sent && ((sent.ran && drawn()) || (!sent.ran && performance.now() - sent.at > 1000))) {
      sent = null;
    }
    return !sent;
  };
  const note = (text) => {
    let el = document.getElementById("amg-key-note");
    if (!el) {
      el = document.createElement("div");
      el.id = "amg-key-note";
      el.setAttribute("role", "status");
      el.style.cssText = "position: fixed; left: 50%%; bottom: 1.5rem; transform: translateX(-50%%); "
        + "z-index: 1000000; padding: 0.5rem 1rem; border-radius: 0.5rem; background: #31333f; "
        + "color: #fff; font: 0.95rem sans-serif; box-shadow: 0 2px 8px rgba(0, 0, 0, 0.3);";
      document.body.appendChild(el);
    }
    el.textContent = text;
    el.hidden = false;
    clearTimeout(el.amgHide);
    el.amgHide = setTimeout(() => { el.hidden = true; }, 4000);
  };
  const drawn = () => {  /* the run is over and every element it drew is on the page */
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute("data-test-script-state") === "notRunning"
      && !document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]');
  };
  const state = (name) => {  /* [press, button] | [wait] | [skip] | [refuse, why] */
    const box = document.querySelector(".st-key-" + name);
    const button = box && box.querySelector("button");
    if (!drawn()) return ["wait"];  /* a click while a run is busy may be folded into it */
    if (button && !button.disabled) return ["press", button];
    if (!document.querySelector(".st-key-%(head)s")) return ["skip"];
    if (!button) return ["refuse", "this page has no button for it"];
    const label = box.querySelector('[data-testid="stMarkdownContainer"]') || button;
    return ["refuse", label.innerText.trim() + " is not available here"];
  };
  const pump = () => {
    timer = null;
    while (queue.length) {
      const k = queue[0];
      const [what, detail] = answered() ? state(k.name) : ["wait"];
      if (what === "wait" && performance.now() - k.at < %(wait_ms)s) {
        timer = setTimeout(pump, 15);
        return;
      }
      queue.shift();
      if (what === "press" && k.name.startsWith("%(choice)s")) {
        pick(k.name.slice("%(choice)s".length), detail);
      } else if (what === "press") {
        const pickButton = k.name === "%(submit)s" && picked
          && document.querySelector(".st-key-%(pick)s" + picked.n + " button");
        (pickButton || detail).click();
        sent = {at: performance.now(), ran: false};
      }
      else if (what === "refuse") note("Key " + k.label + " did nothing: " + detail + ".");
      else if (what === "wait") note("Key " + k.label + " was not applied: the page was still "
                                     + "loading. Press it again.");
    }
  };
  window.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey
        || (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) return;
    const key = e.key.toLowerCase();
    const name = /^[1-9]$/.test(key) ? "%(choice)s" + key : named[key];
    if (!name || (!queue.length && state(name)[0] === "skip")) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    queue.push({name, label: key === "enter" ? "Enter" : key.toUpperCase(), at: performance.now()});
    if (!timer) pump();
  }, true);
  /* A click on a button: Submit with a choice made by key sends that choice with it; any other
     click ends the choice made by key at once (the click's own run draws the server's). Either
     way the next key waits for the click's run, as it does after a key's press. */
  window.addEventListener("click", (e) => {
    /* the app's own buttons only: Streamlit's (the sidebar's toggle, the menu) start no run */
    const button = e.isTrusted && e.target.closest
      && e.target.closest('[data-testid="stButton"] button');
    if (!button) return;
    /* number keys pressed before the click and not applied yet (the page was busy) are
       overtaken by it: applied after its run, they would replace the choice it makes */
    const late = queue.filter((k) => k.name.startsWith("%(choice)s"));
    if (late.length) {
      queue.splice(0, queue.length, ...queue.filter((k) => !late.includes(k)));
      note("Key " + late.map((k) => k.label).join(", ") + " was not applied: a click came after it.");
    }
    const submit = picked && button.closest(".st-key-%(submit)s");
    const pickButton = submit && document.querySelector(".st-key-%(pick)s" + picked.n + " button");
    if (pickButton) {
      e.preventDefault();
      e.stopImmediatePropagation();
      pickButton.click();
    } else unpick();
    sent = {at: performance.now(), ran: false};
  }, true);
  /* The tab's first page: ask for the labeling page now that keys are taken, the link's token
     first taken out of the address bar (as the page script does), so that the run the press
     starts finds the address as it will leave it and adds no history entry. */
  const open = () => {
    const button = document.querySelector(".st-key-%(ready)s button");
    if (!button) return false;
    const url = new URL(window.location.href);
    if (url.searchParams.has("token")) {
      url.searchParams.delete("token");
      window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
    }
    button.click();
    return true;
  };
  const opener = new MutationObserver(() => { if (open()) opener.disconnect(); });
  if (!open()) opener.observe(document.body, {subtree: true, childList: true});
})();
