// The instants' links to the Airflow task instance that made them, when the view is embedded.
// Airflow's UI shows the view in an iframe sandboxed with "allow-scripts allow-same-origin
// allow-forms allow-downloads": no allow-top-navigation, so the links' target="_top" is
// refused and a click does nothing. The frame is of the UI's origin, though, so this script
// can reach the embedding page: it pushes the task instance's URL onto that page's history
// and fires popstate, which Airflow's React router takes as a navigation (no reload; Back
// returns to the view). Opened directly, or framed by a page it cannot reach, a link stays a
// plain link.
(function () {
  "use strict";

  // The embedding window, if there is one and it is of this origin (reading a window of
  // another origin throws).
  function reachableParent() {
    if (window.parent === window) return null;
    try {
      return window.parent.location.origin === window.location.origin ? window.parent : null;
    } catch {
      return null;
    }
  }

  // What react-router's own push stores: the entry's index (how it tells Back from Forward)
  // and a key.
  function routerState(history) {
    const index = history.state && Number.isInteger(history.state.idx) ? history.state.idx : -1;
    return { usr: null, key: Math.random().toString(36).slice(2, 10), idx: index + 1 };
  }

  function openInParent(parent, url) {
    parent.history.pushState(routerState(parent.history), "", url);
    parent.dispatchEvent(new parent.PopStateEvent("popstate", { state: parent.history.state }));
  }

  // A plain click only: a modified one (new tab, download) is the browser's to handle.
  function plainClick(event) {
    return event.button === 0 && !(event.ctrlKey || event.metaKey || event.shiftKey || event.altKey);
  }

  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest("a.airflow-task");
    const parent = link && plainClick(event) ? reachableParent() : null;
    if (!parent) return;
    try {
      openInParent(parent, link.href);
    } catch {
      return; // the link's own navigation is all that is left
    }
    event.preventDefault();
  });
})();
