// The header's menu ("Site navigation") and "On this page" buttons. pydata-sphinx-theme 0.17 and sphinx-book-theme
// 1.3 each attach their sidebar handlers to the first element of the class (.primary-toggle, .secondary-toggle),
// which is the theme navbar's hidden copy; the buttons a reader sees got none, so on a phone a tap opened nothing
// and on a desktop the menu button did not hide the sidebar. A tap on a visible button is passed to that first
// button, whose handlers do what the themes meant: open the sidebar as a dialog on a narrow screen, hide or show
// it on a wide one.
(function () {
  function forward(selector) {
    var buttons = document.querySelectorAll(selector);
    if (buttons.length < 2) return;
    var handled = buttons[0];
    Array.prototype.slice.call(buttons, 1).forEach(function (button) {
      button.addEventListener('click', function (event) {
        event.preventDefault();
        event.stopPropagation();
        handled.click();
        button.blur();
      });
    });
  }
  // On a phone the sidebars open as dialogs: choosing an entry (a link inside one) closes it, so that the page the
  // reader asked for is not left under a drawer over most of the screen; each dialog gets a visible close button.
  function closable() {
    document.addEventListener('click', function (event) {
      var link = event.target.closest && event.target.closest('a[href]');
      var dialog = link && link.closest('dialog[open]');
      if (!dialog) return;
      dialog.close();
      hideTooltips();
      // an entry of this page ("On this page"): the browser scrolled to it while the drawer still held the page
      // still, and the heading landed half a screen short; it is reached again once the drawer is closed
      var hash = link.getAttribute('href');
      var target = hash.charAt(0) === '#' && document.getElementById(decodeURIComponent(hash.slice(1)));
      if (!target) return;
      event.preventDefault();
      history.pushState(null, '', hash);
      requestAnimationFrame(function () { target.scrollIntoView(); });
    });
    // (the sidebars' dialogs only: the header search is a dialog too, and a button first in it took the focus from
    // the search field, so that typed text went nowhere and Enter closed it)
    document.querySelectorAll('dialog').forEach(function (dialog) {
      if (dialog.querySelector('button.jtc-dialog-close, input[type="search"], form.bd-search')) return;
      var close = document.createElement('button');
      close.type = 'button';
      close.className = 'jtc-dialog-close';
      close.setAttribute('aria-label', 'Close');
      close.textContent = '×';
      close.addEventListener('click', function () { dialog.close(); });
      dialog.insertBefore(close, dialog.firstChild);
    });
  }
  // a header button's tooltip, shown on a tap, stayed over the header icons once its drawer had opened and closed
  function hideTooltips() {
    document.querySelectorAll('.tooltip.show').forEach(function (tip) { tip.remove(); });
  }
  // A claim id typed into the search (C12a, N6, F10): the page it leads to opens at the claim's row, of the claims
  // page's verdict grid (verdict-<id>) or of a chapter's verdict table (claim-<id>). The search's words are read
  // here, before the theme's highlighting clears them.
  var searched = '';
  try {
    searched = localStorage.getItem('sphinx_highlight_terms') ||
      new URLSearchParams(window.location.search).get('highlight') || '';
  } catch (e) { searched = ''; }
  function landOnClaim() {
    var terms = searched.toLowerCase().split(/\s+/);
    for (var i = 0; i < terms.length; i++) {
      if (!/^[a-z]{1,2}\d{1,2}[a-z]?$/.test(terms[i])) continue;
      var row = document.getElementById('verdict-' + terms[i]) || document.getElementById('claim-' + terms[i]);
      if (!row) continue;
      history.replaceState(null, '', '#' + row.id);
      row.scrollIntoView();
      // images above the row load after this and push it down: it is reached again once they have
      window.addEventListener('load', function () { row.scrollIntoView(); });
      return;
    }
  }
  // the line "scroll the table sideways" only above a table that does scroll (wider than its box)
  function markOverflow() {
    document.querySelectorAll('div.jtc-scroll').forEach(function (box) {
      box.classList.toggle('jtc-overflows', box.scrollWidth > box.clientWidth + 1);
    });
  }
  // The search page's snippets are the text of the pages' HTML: a formula's TeX source and a code cell's program
  // text were quoted as they are. A snippet reads a formula in plain symbols and leaves code cells out.
  function plainMath(tex) {
    return tex.replace(/\\[()\[\]]|\$/g, '')
      .replace(/\\(?:mathrm|text|mathbf|operatorname|mathit|mathcal)\{([^{}]*)\}/g, '$1')
      .replace(/\\ell\b/g, 'ℓ').replace(/\\top\b/g, 'ᵀ').replace(/\\cdot\b/g, '·').replace(/\\to\b/g, '→')
      .replace(/\\[a-zA-Z]+/g, '').replace(/[{}]/g, '').replace(/\s+/g, ' ');
  }
  function cleanSnippets() {
    if (typeof Search === 'undefined' || !Search.htmlToText || Search.htmlToTextRaw) return;
    var toText = Search.htmlToTextRaw = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, 'text/html');
      doc.querySelectorAll('div.cell_input, div.highlight, pre').forEach(function (el) { el.remove(); });
      doc.querySelectorAll('.math').forEach(function (el) { el.textContent = plainMath(el.textContent); });
      return toText.call(this, doc.documentElement.outerHTML, anchor);
    };
  }
  function start() {
    cleanSnippets();
    markOverflow();
    window.addEventListener('resize', markOverflow);
    window.addEventListener('load', markOverflow);
    document.addEventListener('toggle', markOverflow, true);  // a folded table opened
    document.querySelectorAll('.primary-toggle, .secondary-toggle').forEach(function (button) {
      button.addEventListener('click', function () { setTimeout(hideTooltips, 0); });
    });
    landOnClaim();
    forward('.primary-toggle');
    forward('.secondary-toggle');
    closable();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
