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
      if (dialog) dialog.close();
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
  function start() {
    forward('.primary-toggle');
    forward('.secondary-toggle');
    closable();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
