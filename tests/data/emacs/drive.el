;;; drive.el --- run by tests/test_editor_emacs.py  -*- lexical-binding: t -*-

;; Loaded by `emacs --batch' after the init.el taken from docs/lsp.md.  It visits the config
;; ($TRAINSPEC_EMACS_FILE) as `C-x C-f' does, starts eglot as `M-x eglot' does, waits for the
;; server's diagnostics in Flymake, picks a code action through `M-x eglot-code-actions' as a user
;; picks it at the completion prompt, waits for the diagnostics of the edited buffer, and writes
;; everything it saw as JSON to $TRAINSPEC_EMACS_OUT.  Emacs exits whatever happens.
;;
;; Batch Emacs has no command loop, so it is never idle and runs no idle timers; eglot sends a
;; buffer's changes and Flymake restarts its checks from such timers once the user stops typing.
;; `drive-idle' runs the pending one-shot idle timers, as an Emacs left idle long enough would.
;;
;; With $TRAINSPEC_EMACS_OTHER set, it then visits that file too (a file that is no training
;; config), runs `M-x eglot' there and records the mode and the command of the server eglot chose.

(require 'cl-lib)
(require 'json)

(defvar drive-out (or (getenv "TRAINSPEC_EMACS_OUT") (error "TRAINSPEC_EMACS_OUT is not set")))
(defvar drive-action (or (getenv "TRAINSPEC_EMACS_ACTION") (error "TRAINSPEC_EMACS_ACTION is not set")))
(defvar drive-timeout (string-to-number (or (getenv "TRAINSPEC_EMACS_TIMEOUT") "30")))
(defvar drive-result nil "An alist, written as a JSON object.")

(defun drive-put (key value)
  (setq drive-result (append drive-result (list (cons key value)))))

(defun drive-idle ()
  "Run the pending one-shot idle timers, as Emacs does once the user has stopped typing."
  (dolist (timer (copy-sequence timer-idle-list))
    (unless (timer--repeat-delay timer)
      (timer-event-handler timer))))

(defun drive-wait (predicate &optional idle)
  "Read the server's messages until PREDICATE holds or the timeout; return PREDICATE's value.
With IDLE, let the idle timers run in between."
  (let ((deadline (+ (float-time) drive-timeout))
        found)
    (while (and (not (setq found (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.02)
      (when idle (drive-idle)))
    found))

(defun drive-lsp-diag (diag)
  (cdr (assq 'eglot-lsp-diag (flymake-diagnostic-data diag))))

(defun drive-diagnostics ()
  "Flymake's diagnostics of the buffer, as JSON-ready alists."
  (vconcat
   (mapcar (lambda (d)
             (let ((beg (flymake-diagnostic-beg d))
                   (lsp (drive-lsp-diag d)))
               (save-excursion
                 (goto-char beg)
                 `((line . ,(1- (line-number-at-pos)))
                   (col . ,(current-column))
                   (code . ,(plist-get lsp :code))
                   (type . ,(symbol-name (flymake-diagnostic-type d)))
                   (source . ,(plist-get lsp :source))
                   (message . ,(plist-get lsp :message))
                   (text . ,(flymake-diagnostic-text d))))))
           (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a)
                                                      (flymake-diagnostic-beg b)))))))

(defun drive-find (code)
  (cl-find-if (lambda (d) (equal (plist-get (drive-lsp-diag d) :code) code))
              (flymake-diagnostics)))

(defun drive-run ()
  (drive-put 'emacs emacs-version)
  (require 'find-func)
  (require 'lisp-mnt)
  (drive-put 'eglot (lm-version (find-library-name "eglot")))
  (find-file (or (getenv "TRAINSPEC_EMACS_FILE") (error "TRAINSPEC_EMACS_FILE is not set")))
  (drive-put 'file (file-relative-name buffer-file-name))
  (drive-put 'mode (symbol-name major-mode))
  ;; M-x eglot
  (call-interactively #'eglot)
  (drive-put 'managed (if (drive-wait (lambda () eglot--managed-mode)) t :json-false))
  (let ((server (eglot-current-server)))
    (drive-put 'server (and server (jsonrpc-name server)))
    (drive-put 'command (and server (vconcat (process-command (jsonrpc--process server))))))
  (drive-put 'flymake (if flymake-mode t :json-false))
  ;; eglot sends the workspace configuration (worldSize) just after opening the buffer, so the
  ;; first diagnostics may still say that no world size is known: wait for the next ones
  (drive-wait (lambda () (and (flymake-diagnostics) (not (drive-find "world-size-unknown")))))
  (drive-put 'published (drive-diagnostics))
  (let ((typo (drive-find "unknown-key"))
        offered)
    (when typo
      (goto-char (flymake-diagnostic-beg typo))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq offered (mapcar #'car collection))
                   drive-action)))
        ;; as typed: `last-nonmenu-event' is a key, so eglot prompts rather than popping a menu
        (let ((last-nonmenu-event ?\r))
          (call-interactively #'eglot-code-actions)))
      (drive-put 'offered (vconcat offered))
      (drive-put 'fixed (if (drive-wait (lambda () (and (not (drive-find "unknown-key"))
                                                       (drive-find "tp-divides-heads")))
                                         t)
                            t
                          :json-false))
      (drive-put 'lines (vconcat (split-string (buffer-substring-no-properties (point-min) (point-max))
                                               "\n")))
      (drive-put 'after (drive-diagnostics)))))

(defun drive-other (file)
  "Visit FILE, start eglot in it and record its mode and the server eglot started."
  (find-file file)
  (drive-put 'other-mode (symbol-name major-mode))
  (call-interactively #'eglot)
  (drive-put 'other-managed (if (drive-wait (lambda () eglot--managed-mode)) t :json-false))
  (let ((server (eglot-current-server)))
    (drive-put 'other-command (and server (vconcat (process-command (jsonrpc--process server))))))
  (ignore-errors (eglot-shutdown (eglot-current-server))))

(condition-case-unless-debug err
    (drive-run)
  (error (drive-put 'error (error-message-string err))))
(ignore-errors (eglot-shutdown (eglot-current-server)))
(when (getenv "TRAINSPEC_EMACS_OTHER")
  (condition-case-unless-debug err
      (drive-other (getenv "TRAINSPEC_EMACS_OTHER"))
    (error (drive-put 'error (format "%s: %s" (getenv "TRAINSPEC_EMACS_OTHER") (error-message-string err))))))
(with-temp-file drive-out
  (insert (json-encode drive-result)))
(kill-emacs 0)
