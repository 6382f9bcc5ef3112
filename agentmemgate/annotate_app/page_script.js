(() => {
  /* amg page script: %(nonce)s */
  const url = new URL(window.location.href);
  if (url.searchParams.has("token")) {
    url.searchParams.delete("token");
    window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
  }
  if (!%(scroll)s) return;
  const q = (key) => document.querySelector(".st-key-" + key);
  const pageOf = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowY;
      if (o === "auto" || o === "scroll") return p;
    }
    return document.scrollingElement;
  };
  const fit = () => {
    const chat = q("%(chat)s");
    if (!chat) return;
    const top = chat.getBoundingClientRect().top + pageOf(chat).scrollTop;
    const room = Math.max(240, Math.floor(window.innerHeight - top - 24));
    document.documentElement.style.setProperty("--amg-chat-height", room + "px");
  };
  const bring = () => {  /* the turn, and as much as fits of what leads up to it */
    const chat = q("%(chat)s"), turn = q("%(target)s");
    if (!chat || !turn) return;
    const c = chat.getBoundingClientRect(), t = turn.getBoundingClientRect();
    if (t.top < c.top || t.bottom > c.bottom) {
      chat.scrollTop += t.height > 0.75 * c.height ? t.top - c.top
                                                   : t.bottom - (c.top + 0.75 * c.height);
    }
    const v = turn.getBoundingClientRect();
    if (v.top < 0 || v.bottom > window.innerHeight) turn.scrollIntoView({block: "nearest"});
  };
  let tries = 0;
  const place = () => {
    const chat = q("%(chat)s"), head = q("%(head)s");
    if (!chat || !head || (%(has_target)s && !q("%(target)s"))) {
      if (tries++ < 100) setTimeout(place, 50);
      return;
    }
    pageOf(chat).scrollTop = 0;
    fit();
    chat.scrollTop = 0;
    bring();
    if (window.amgObserver) window.amgObserver.disconnect();
    window.amgObserver = new ResizeObserver(fit);
    window.amgObserver.observe(head);
    if (!window.amgOnResize) {
      window.amgOnResize = true;
      window.addEventListener("resize", fit);
    }
    setTimeout(() => { fit(); bring(); }, 400);  /* again once the page has settled */
  };
  place();
})();
